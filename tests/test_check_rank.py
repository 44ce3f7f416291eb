"""The check reads how far down the engine ranks a written key (issue 43, item 5): a key ranked 32nd of 79 papers
for its sentence is *likely wrong*, not *doubtful*; 1/rank alone read the 32nd and the 50th alike."""

from __future__ import annotations

import math

import pytest

from citefinder.check.model import FIT_FEATURES, WRONG, default_model


def _at(rank: int, library: int) -> dict[str, float]:
    return {"log_rank": math.log(rank), "rank_share": min(1.0, rank / library), "rr_fused": 1.0 / rank,
            "in_list": 1.0}


def test_the_check_fits_the_rank_on_a_scale_that_keeps_counting() -> None:
    assert {"log_rank", "rank_share"} <= set(FIT_FEATURES)
    model = default_model()
    assert {"log_rank", "rank_share"} <= set(model.features)


@pytest.mark.parametrize("library", [79, 250])
def test_a_key_ranked_far_down_is_less_probable_than_the_first_and_likely_wrong_means_more_wrong_than_right(
        library: int) -> None:
    model = default_model()
    typical = dict(zip(model.features, model.mean, strict=True))  # a citation like the training ones
    first = model.probability({**typical, **_at(1, library)})
    far = model.probability({**typical, **_at(32, library)})
    farther = model.probability({**typical, **_at(60, library)})
    assert farther < far < first  # 1/rank alone read the 32nd and the 60th alike
    assert "as likely wrong as right" in model.provenance and model.wrong_below < model.doubtful_below
    assert model.verdict(model.wrong_below - 0.01) == WRONG
