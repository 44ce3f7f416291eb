"""The check reads how far down the engine ranks a written key (issue 43, item 5): a key ranked 32nd of 79 papers
for its sentence is *likely wrong*, not *doubtful*; 1/rank alone read the 32nd and the 50th alike."""

from __future__ import annotations

import math

import pytest

from citefinder.check.model import FIT_FEATURES, WRONG, default_model


def _at(rank: int, library: int) -> dict[str, float]:
    return {"log_rank": math.log(rank), "rank_share": min(1.0, rank / library), "rr_fused": 1.0 / rank,
            "in_list": 1.0}


def test_the_check_can_fit_the_rank_on_a_scale_that_keeps_counting() -> None:
    assert {"log_rank", "rank_share"} <= set(FIT_FEATURES)  # offered to the next fit (bench/check_eval.py fit)


@pytest.mark.parametrize("library", [79, 250])
def test_a_key_ranked_far_down_is_less_probable_than_the_first(library: int) -> None:
    model = default_model()
    typical = dict(zip(model.features, model.mean, strict=True))  # a citation like the training ones
    first = model.probability({**typical, **_at(1, library)})
    far = model.probability({**typical, **_at(32, library)})
    assert far < first


def test_likely_wrong_means_at_least_as_likely_wrong_as_right() -> None:
    model = default_model()
    assert "as likely wrong as right" in model.provenance and model.wrong_below < model.doubtful_below
    # the swapped key ranked 32nd of 79, shown "doubtful 0.74": likely wrong now
    assert model.verdict(0.74) == WRONG and model.verdict(model.doubtful_below) != WRONG
