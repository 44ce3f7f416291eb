"""The literature as an open-world check (citefinder/select/open_world.py): an auto-fill whose best literature
paper is clearly a better answer is withdrawn and that paper offered; a confident fill, a user's or an LLM's
pick, and a slot without a literature are left alone."""

from __future__ import annotations

import pytest

from citefinder.select.open_world import OpenWorld, check, default_open_world, withdrawn_why
from citefinder.types import Candidate, Hit, Paper, Query, Selection, Slot, SlotResult, StageTrace

SENTENCE = "The Transformer architecture [CITATION] relies entirely on self-attention."
BERT = Paper("bert", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding")
ATTENTION = Paper("arxiv:1706.03762", "Attention Is All You Need")
RULE = OpenWorld(intercept=0.0, own=1.0, lit=-1.0, below=0.3)  # right when own and literature are alike


PLAIN = "Attention alone can model a whole sequence [CITATION] without any recurrence."  # names no work


def filled(conf: float, lit_conf: float | None, method: str = "threshold", sentence: str = SENTENCE) -> SlotResult:
    slot = Slot(0, 28, 38, "[CITATION]", sentence, sentence)
    sel = Selection("found", BERT, conf, method, "selected the top fused candidate")
    trace = StageTrace("select", top=(Hit("bert", 1, conf),), details={"selected": "bert"})
    lit = () if lit_conf is None else (
        Candidate(ATTENTION, origin="papers-333k").with_score("literature", 1, lit_conf),)
    return SlotResult(slot, Query(sentence), (Candidate(BERT),), sel, (trace,), literature=lit)


def test_a_fill_the_literature_clearly_beats_is_withdrawn_and_says_why() -> None:
    out = check(filled(0.62, 0.97), RULE)
    assert out.selection.status == "not_found" and out.selection.paper is None
    assert out.literature[0].paper == ATTENTION  # the literature's paper is the one offered first
    why = withdrawn_why(out)
    assert why is not None and "Attention Is All You Need" in why and "BERT" in why
    note = out.trace("select").details["open_world"]
    assert note["withdrawn"] == "bert" and note["offered"] == ATTENTION.doc_id and note["p_own_right"] < RULE.below
    assert out.trace("select").details["selected"] is None


@pytest.mark.parametrize(("conf", "lit", "method"), [
    (0.95, 0.40, "threshold"),  # the user's paper is far more confident: kept
    (0.62, None, "threshold"),  # no literature: the library alone decides
    (0.62, 0.97, "manual"),  # the user's own pick
    (0.62, 0.97, "llm"),  # an LLM's choice
])
def test_other_slots_are_left_alone(conf: float, lit: float | None, method: str) -> None:
    before = filled(conf, lit, method, PLAIN)
    assert check(before, RULE) == before
    assert check(filled(0.62, 0.97, sentence=PLAIN), None) == filled(0.62, 0.97, sentence=PLAIN)  # no rule: unchanged


def test_a_fill_that_is_not_the_work_its_sentence_names_is_withdrawn_when_the_literature_holds_that_work() -> None:
    out = check(filled(0.95, 0.40), RULE)  # the fill is far more confident, but the sentence names the Transformer
    assert out.selection.status == "not_found" and out.literature[0].paper == ATTENTION
    assert out.trace("select").details["open_world"]["named"] is True
    assert check(filled(0.95, 0.40), None).selection.status == "not_found"  # evidence, not the fitted numbers


def test_the_literature_paper_compared_is_the_best_by_its_own_probability_not_the_first_listed() -> None:
    from dataclasses import replace

    weak = Candidate(Paper("arxiv:x", "Speech Transformer"), origin="papers-333k").with_score("literature", 1, 0.2)
    strong = Candidate(Paper("arxiv:y", "Self-attention for sequences"), origin="papers-333k").with_score(
        "literature", 2, 0.97)
    before = replace(filled(0.62, None, sentence=PLAIN), literature=(weak, strong))  # the priors put the weak first
    out = check(before, RULE)
    assert out.selection.status == "not_found" and out.literature[0] is strong
    assert check(replace(before, literature=(weak,)), RULE) == replace(before, literature=(weak,))


def test_the_rule_is_a_calibrated_comparison_monotone_in_both_confidences() -> None:
    assert RULE.p_own_right(0.9, 0.5) > RULE.p_own_right(0.6, 0.5) > RULE.p_own_right(0.6, 0.9)
    assert RULE.could_withdraw(0.6) and not RULE.could_withdraw(0.99999)
    assert OpenWorld.from_dict(RULE.to_dict()) == RULE


def test_the_shipped_rule_is_fit_on_training_slots_and_withdraws_only_against_a_confident_literature() -> None:
    rule = default_open_world()
    assert rule is not None and "training" in rule.provenance
    assert rule.lit < 0 < rule.own  # a surer literature paper makes the user's pick less likely right, and vice versa
    assert not rule.withdraws(0.9, 0.05)  # a literature that finds nothing better never withdraws a fill
