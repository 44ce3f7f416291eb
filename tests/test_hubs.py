"""The draft-level hub check (citefinder/select/hubs.py): a paper auto-filled for a second, unlike sentence
has its confidence lowered (and is not filled below the threshold); alike sentences, a user's or an LLM's
picks are left alone; and the names agent finds the Transformer's paper on the sample library."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.select.hubs import HUB_FACTOR, held_back, hold_back
from citefinder.types import Candidate, Hit, Paper, Query, Selection, Slot, SlotResult, StageTrace

HUB = Paper("hub", "SPLADE: Sparse Lexical and Expansion Model")
OTHER = Paper("other", "Dense Passage Retrieval")
THRESHOLD = 0.55


def result(i: int, text: str, paper: Paper = HUB, conf: float = 0.8, method: str = "threshold",
           names: tuple[str, ...] = ()) -> SlotResult:
    slot = Slot(i, 0, 10, "[CITATION]", text, text)
    sel = Selection("found", paper, conf, method, "selected the top fused candidate")
    trace = StageTrace("select", top=(Hit(paper.doc_id, 1, conf), Hit(OTHER.doc_id, 2, 0.1)),
                       details={"selected": paper.doc_id})
    return SlotResult(slot, Query(text, names=names), (Candidate(paper), Candidate(OTHER)), sel, (trace,))


def test_a_second_unlike_sentence_is_held_back_and_says_why() -> None:
    first = result(0, "Gravel tambourine lexicon pivot melancholy saddle [CITATION] orchestral vinegar.")
    second = result(1, "Giraffe footpath varnishes breed unhorse pressurized [CITATION] precedent duet.", conf=0.65)
    assert hold_back(first, [], THRESHOLD) is first
    held = hold_back(second, [first], THRESHOLD)
    assert held.selection.status == "not_found" and held.selection.paper is None
    assert held.selection.confidence == pytest.approx(0.65 * HUB_FACTOR) and held.selection.confidence < THRESHOLD
    why = held_back(held)
    assert why is not None and "slot 1" in why and HUB.title in why and "not filled" in why
    select = held.trace("select")
    assert select is not None and select.details["selected"] is None
    assert select.top[0].score == pytest.approx(0.65 * HUB_FACTOR)  # what the page shows as its probability


def test_a_strong_pick_drops_but_stays_when_still_above_the_threshold() -> None:
    first = result(0, "Learned sparse retrieval expands documents with terms [CITATION].")
    second = result(1, "Our pipeline runs on two machines in parallel [CITATION].", conf=0.99)
    held = hold_back(second, [first], THRESHOLD)
    assert held.selection.status == "found" and held.selection.confidence == pytest.approx(0.99 * HUB_FACTOR)
    assert held_back(held) is not None


def test_alike_sentences_a_shared_name_and_other_methods_are_left_alone() -> None:
    first = result(0, "SPLADE expands documents with learned sparse terms [CITATION].", names=("SPLADE",))
    same_words = result(1, "Learned sparse terms expand each document [CITATION].")
    same_name = result(2, "We compare against SPLADE [CITATION] on three tasks.", names=("SPLADE",))
    by_llm = result(3, "Totally unrelated words about gardens and rain [CITATION].", method="llm")
    other_paper = result(4, "Totally unrelated words about gardens and rain [CITATION].", paper=OTHER)
    for r in (same_words, same_name, by_llm, other_paper):
        assert hold_back(r, [first], THRESHOLD) is r


def test_a_third_sentence_is_compared_with_the_filled_ones_only() -> None:
    first = result(0, "Gravel tambourine lexicon pivot melancholy [CITATION].")
    second = hold_back(result(1, "Giraffe footpath varnishes breed [CITATION].", conf=0.6), [], THRESHOLD)
    second = hold_back(second, [first], THRESHOLD)
    assert second.selection.status == "not_found"
    third = hold_back(result(2, "Giraffe footpath varnishes again [CITATION].", conf=0.6), [first, second], THRESHOLD)
    assert third.selection.status == "not_found"  # alike the held-back one, unlike the filled one


@pytest.mark.slow
def test_the_transformer_architecture_selects_attention_is_all_you_need(tmp_path: Path) -> None:
    from app_support import build_sample_library
    from citefinder.config import Settings
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    folder = build_sample_library(tmp_path / "sample")
    settings = Settings(library=folder)
    (r,) = Pipeline(settings, Library.open(settings)).cite_text(
        "The Transformer architecture [CITATION] replaced recurrence.")
    assert r.selection.status == "found" and r.selection.paper is not None
    assert r.selection.paper.title == "Attention Is All You Need"
