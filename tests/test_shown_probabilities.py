"""One number per candidate: the probability that it is the cited paper, never above a candidate shown before it,
and for candidates below the top read through the map fit on the training drafts (bench/lower_ranks.py)."""

from __future__ import annotations

import pytest

from citefinder.rank.calibration import LOWER_RANKS, shown_probabilities


def test_the_numbers_follow_the_order():
    raw = [0.18, 0.20, 0.29, 0.05, 0.4]  # the slot 24: #3 read 0.29 while #1 read 0.18
    shown = shown_probabilities(raw)
    assert shown[0] == 0.18  # the top candidate's number is the model's
    assert all(a >= b for a, b in zip(shown, shown[1:], strict=False))
    assert shown_probabilities(raw, lower=None) == [0.18, 0.18, 0.18, 0.05, 0.05]
    assert shown_probabilities([]) == []


def test_a_lower_candidate_reads_lower_than_the_raw_model_number():
    assert LOWER_RANKS is not None
    shown = shown_probabilities([0.9, 0.8, 0.7])
    assert shown[0] == pytest.approx(0.9)
    assert shown[1] < 0.8 and shown[2] < shown[1]  # measured: rank 2 candidates numbered 0.19 were gold 12% of the time
