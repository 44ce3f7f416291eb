"""Calibrated confidence: retriever agreement decides, and the no-LLM rule abstains on disagreement."""

from __future__ import annotations

import pytest

from citefinder.calibration import DEFAULT_CALIBRATION, bucket_name
from citefinder.config import Settings
from citefinder.select.fallback import ThresholdSelector
from citefinder.types import Candidate, Paper


def cand(doc_id: str, **ranks: int) -> Candidate:
    c = Candidate(Paper(doc_id, f"Paper {doc_id}"))
    for name, rank in ranks.items():
        c = c.with_score(name, rank, 1.0 / rank)
    return c


@pytest.mark.parametrize(
    ("ranks", "bucket"),
    [
        ({"bm25": 1, "dense": 1}, "both_first"),
        ({"bm25": 1, "dense": 3}, "first_and_top3"),
        ({"bm25": 2, "dense": 1}, "first_and_top3"),
        ({"bm25": 1, "dense": 10}, "first_and_top10"),
        ({"bm25": 1, "dense": 11}, "first_only"),
        ({"bm25": None, "dense": 1}, "first_only"),
        ({"bm25": 3, "dense": 2}, "both_top3"),
        ({"bm25": 2, "dense": 4}, "other"),
        ({"bm25": None, "dense": None}, "other"),
        ({"bm25": 1}, "single_first"),
        ({"bm25": 2}, "single_other"),
        ({}, "single_other"),
    ],
)
def test_bucket_name(ranks, bucket):
    assert bucket_name(ranks) == bucket


def test_agreement_orders_confidence_and_the_default_threshold_splits_it():
    cal = DEFAULT_CALIBRATION
    both = cal.of(cand("a", bm25=1, dense=1), ["bm25", "dense"]).precision
    near = cal.of(cand("a", bm25=1, dense=2), ["bm25", "dense"]).precision
    one = cal.of(cand("a", bm25=1), ["bm25", "dense"]).precision  # dense ran but did not return it
    lone = cal.of(cand("a", bm25=1), ["bm25"]).precision  # only BM25 ran (vectors pending)
    assert both > near > one and both > lone
    threshold = Settings().confidence_threshold
    assert near < threshold <= both  # the measured F1-best rule: select only on full agreement
    assert all(0.0 <= b.precision <= 1.0 for b in cal.buckets)
    assert len({b.name for b in cal.buckets}) == len(cal.buckets)


def test_threshold_selector_abstains_when_retrievers_disagree():
    cal = DEFAULT_CALIBRATION
    sel = ThresholdSelector(Settings().confidence_threshold)
    agreed = [cand("a", bm25=1, dense=1), cand("b", bm25=2, dense=2)]
    split = [cand("a", bm25=1, dense=7), cand("b", bm25=2, dense=1)]
    found, why = sel.decide(agreed, cal.confidences(agreed, ["bm25", "dense"]))
    assert found.status == "found" and found.paper.doc_id == "a" and found.confidence == pytest.approx(0.391)
    missing, why = sel.decide(split, cal.confidences(split, ["bm25", "dense"]))
    assert missing.status == "not_found" and missing.paper is None and "below threshold" in why


def test_table_is_the_measured_frequencies():
    for b in DEFAULT_CALIBRATION.buckets:
        if b.total:
            assert b.precision == pytest.approx(b.correct / b.total, abs=0.001), b.name
