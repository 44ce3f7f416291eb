"""Calibrated confidence: a probability from the candidate list that separates right from wrong picks."""

from __future__ import annotations

import pytest

from citefinder.config import Settings
from citefinder.rank.calibration import Calibration, candidate_features, confidence_words, default_calibration
from citefinder.select.fallback import ThresholdSelector
from citefinder.types import Candidate, Paper

AGENTS = ["bm25", "dense", "title", "names"]


def cand(doc_id: str, fused: float, **ranks: int) -> Candidate:
    c = Candidate(Paper(doc_id, f"Paper {doc_id}"))
    for name, rank in ranks.items():
        c = c.with_score(name, rank, 0.6 if name == "dense" else 1.0 / rank)
    return c.with_score("fused", 1, fused)


def test_agreement_and_margin_raise_the_probability():
    cal = default_calibration()
    agreed = [cand("a", 0.06, bm25=1, dense=1, title=1, names=1), cand("b", 0.02, bm25=2, dense=3, title=4)]
    split = [cand("a", 0.031, bm25=1, dense=9), cand("b", 0.030, dense=1, title=2, bm25=8)]
    ran = [*AGENTS, "near", "context"]  # what runs for a slot of a draft (near and context always do there)
    p_agreed = cal.confidences(agreed, ran, 200)["a"]
    p_split = cal.confidences(split, ran, 200)["a"]
    assert 0.0 <= p_split < p_agreed <= 1.0
    assert p_agreed - p_split > 0.2


def test_features_read_every_agent_and_the_margin():
    cands = [cand("a", 0.05, bm25=1, names=1), cand("b", 0.01, dense=1)]
    f = candidate_features(cands, 0, ["bm25", "dense", "names"], 1000)
    assert f["rr_bm25"] == 1.0 and f["rr_dense"] == 0.0 and f["rr_names"] == 1.0
    assert f["ran_dense"] == 1.0 and f["ran_title"] == 0.0
    assert f["firsts"] == 2.0 and f["margin"] == pytest.approx(0.8)
    assert f["log_library"] == pytest.approx(3.0)


def test_shipped_model_is_fit_on_training_data_and_has_a_reliability_table():
    cal = default_calibration()
    assert "training data only" in cal.provenance
    assert len(cal.features) == len(cal.coef) == len(cal.mean) == len(cal.scale)
    assert cal.reliability and all(0.0 <= r["precision"] <= 1.0 for r in cal.reliability)


def test_probability_is_a_logistic_of_standardised_features():
    cal = Calibration(("x",), (2.0,), 0.0, (1.0,), (0.5,))
    assert cal.probability({"x": 1.0}) == pytest.approx(0.5)
    assert cal.probability({"x": 1.5}) == pytest.approx(1 / (1 + 2.718281828 ** -2), rel=1e-6)


def test_confidence_in_words():
    from citefinder.rank.calibration import word_cutoffs

    likely, unsure = word_cutoffs()
    assert 0.0 < unsure <= likely < 1.0
    assert likely == Settings().confidence_threshold  # one fit: every auto-fill reads likely right, nothing else does
    for p, words in ((0.999, "likely right"), (likely, "likely right"), (likely - 0.01, "unsure" if likely - 0.01
                                                                                       >= unsure else "unlikely"),
                     (unsure, "unsure" if unsure < likely else "likely right"), (unsure - 0.01, "unlikely")):
        assert confidence_words(p) == words


def test_the_shipped_adjustment_is_fit_on_training_drafts_within_their_sizes():
    cal = default_calibration()
    adj = cal.adjust
    assert "training part only" in adj["provenance"] and adj["terms"][:3] == ["logit", "log_library", "log_slots"]
    assert adj["words"]["likely"] > adj["words"]["unsure"]
    feats = {"library": 45.0}
    assert cal.adjusted(0.9, {**feats, "draft_slots": 80.0}) > cal.adjusted(0.5, {**feats, "draft_slots": 80.0})
    # outside the sizes it was fit on, the logistic model alone: a paste of fewer slots, a tiny or a huge library
    for outside in ({**feats, "draft_slots": float(adj["min_slots"]) - 1}, {"library": 3.0, "draft_slots": 40.0},
                    {"library": 50_000.0, "draft_slots": 40.0}):
        assert not cal.adjusts(outside)
    assert cal.adjusts({"library": float(adj["min_library"]), "draft_slots": float(adj["min_slots"])})


def test_threshold_selector_abstains_below_the_default_threshold():
    sel = ThresholdSelector(Settings().confidence_threshold)
    cands = [cand("a", 0.03, bm25=1), cand("b", 0.029, dense=1)]
    below = {"a": Settings().confidence_threshold - 0.01, "b": 0.1}
    missing, why = sel.decide(cands, below)
    assert missing.status == "not_found" and missing.paper is None and "below threshold" in why
    found, _ = sel.decide(cands, {"a": Settings().confidence_threshold, "b": 0.1})
    assert found.status == "found" and found.paper.doc_id == "a"


def test_the_adjustment_reads_the_library_size_and_the_draft_length_of_a_drafts_slot_only():
    import math

    adjust = {"terms": ["logit", "log_library", "log_slots"], "coef": [1.0, -1.0, 0.5], "intercept": 1.0,
              "max_library": 600}
    cal = Calibration(("x",), (2.0,), 0.0, (1.0,), (0.5,), adjust=adjust)
    plain = Calibration(("x",), (2.0,), 0.0, (1.0,), (0.5,))
    feats = {"x": 1.5, "library": 100.0}
    p = plain.probability(feats)
    assert cal.probability(feats) == pytest.approx(p)  # no draft_slots: a search, a check, a benchmark item
    logit = math.log(p / (1 - p))
    z = 1.0 + logit - 2.0 + 0.5 * math.log10(4)
    assert cal.probability({**feats, "draft_slots": 4.0}) == pytest.approx(1 / (1 + math.exp(-z)))
    assert cal.probability({"x": 1.5, "library": 50_000.0, "draft_slots": 4.0}) == pytest.approx(p)  # beyond its fit
    assert Calibration.from_dict(cal.to_dict()) == cal
    f = candidate_features([cand("a", 0.05, bm25=1)], 0, ["bm25"], 45, draft_slots=4)
    assert f["draft_slots"] == 4.0 and "draft_slots" not in candidate_features([cand("a", 0.05, bm25=1)], 0,
                                                                                ["bm25"], 45)


def test_the_adjustment_reads_whether_the_top_and_the_runner_up_have_an_abstract_and_how_far_ahead_it_is():
    from citefinder.rank.calibration import TRANSFER, adjust_terms

    def with_abstract(c: Candidate, text: str) -> Candidate:
        return Candidate(Paper(c.doc_id, c.paper.title, abstract=text), c.scores)

    top, runner = cand("a", 0.05, bm25=1, names=1), cand("b", 0.04, dense=1)
    ahead = candidate_features([with_abstract(top, "We propose..."), runner], 0, ["bm25", "dense", "names"], 80)
    behind = candidate_features([top, with_abstract(runner, "We propose...")], 0, ["bm25", "dense", "names"], 80)
    both = candidate_features([with_abstract(top, "x"), with_abstract(runner, "y")], 0, ["bm25", "dense"], 80)
    assert (ahead["abstract"], ahead["abstract_diff"]) == (1.0, 1.0)
    assert (behind["abstract"], behind["abstract_diff"]) == (0.0, -1.0)
    assert both["abstract_diff"] == 0.0
    terms = adjust_terms(0.6, {**ahead, "draft_slots": 40.0})
    assert set(TRANSFER) <= set(terms) and terms["abstract_diff"] == 1.0 and terms["rr_names"] == 1.0
    assert terms["margin"] == pytest.approx(ahead["margin"])
    alone = adjust_terms(0.6, candidate_features([top], 0, ["bm25"], 80, draft_slots=40))
    assert alone["margin"] == 1.0 and alone["abstract_diff"] == 0.0 and alone["second_firsts"] == 0.0


def test_the_default_threshold_is_the_one_fit_with_the_confidence():
    import json
    from importlib import resources

    shipped = json.loads(resources.files("citefinder.data").joinpath("confidence.json").read_text())
    assert Settings().confidence_threshold == shipped["adjust"]["threshold"]
    assert Settings(confidence_threshold=0.3).confidence_threshold == 0.3
