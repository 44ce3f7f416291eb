"""What the Cite page downloads: .bib of the chosen papers, the filled draft, the JSON results."""

from __future__ import annotations

import json

import bibtexparser

from citefinder.text.slots import find_slots
from citefinder.types import Candidate, Paper, Query, Selection, SlotResult
from citefinder.ui import exports, tables

TEXT = "Attention replaced recurrence [CITATION]. BM25 is a strong baseline [CITATION]. Unknown here [CITATION]."
ATTN = Paper("arxiv:1706.03762", "Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer"), 2017, "NeurIPS",
             arxiv_id="1706.03762")
BM25 = Paper("doi:10.1561/1500000019", "The Probabilistic Relevance Framework: BM25 and Beyond",
             ("Stephen Robertson", "Hugo Zaragoza"), 2009, "Foundations and Trends in Information Retrieval",
             doi="10.1561/1500000019")
BERT = Paper("arxiv:1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers", ("Jacob Devlin",), 2019)


def results() -> list[SlotResult]:
    slots = find_slots(TEXT)
    cands = (Candidate(ATTN).with_score("bm25", 2, 3.1).with_score("dense", 1, 0.8).with_score("fused", 1, 0.032),
             Candidate(BERT).with_score("dense", 2, 0.7).with_score("fused", 2, 0.016))
    found = [Selection("found", ATTN, 0.9, "threshold"), Selection("found", BM25, 0.8, "threshold"),
             Selection("not_found", None, 0.2, "threshold", "below threshold")]
    return [SlotResult(s, Query(s.context), cands, sel, ()) for s, sel in zip(slots, found, strict=False)]


def test_default_choices_are_the_selectors_picks():
    assert exports.default_choices(results()) == {0: ATTN.doc_id, 1: BM25.doc_id, 2: None}


def test_bibliography_has_each_chosen_paper_once_and_keys_per_slot():
    rs = results()
    choices = {0: ATTN.doc_id, 1: BM25.doc_id, 2: ATTN.doc_id}  # the user picked ATTN for slot 3 too
    bib, keys = exports.bibliography(rs, choices)
    entries = bibtexparser.parse_string(bib).entries
    assert len(entries) == 2
    assert keys[0] == keys[2] != keys[1]
    filled = exports.filled_draft(TEXT, rs, keys)
    assert filled == (f"Attention replaced recurrence \\cite{{{keys[0]}}}. BM25 is a strong baseline "
                      f"\\cite{{{keys[1]}}}. Unknown here \\cite{{{keys[0]}}}.")


def test_unchosen_slots_stay_markers_and_nothing_chosen_gives_empty_bib():
    rs = results()
    bib, keys = exports.bibliography(rs, {0: None, 1: None, 2: None})
    assert (bib, keys) == ("", {})
    assert exports.filled_draft(TEXT, rs, keys) == TEXT


def test_override_to_a_candidate_outside_the_selection():
    rs = results()
    assert exports.paper_for(rs[0], BERT.doc_id) == BERT
    assert exports.paper_for(rs[0], "arxiv:0000.00000") is None


def test_results_json_is_slot_results_plus_the_users_choice():
    rows = json.loads(exports.results_json(results(), {0: BERT.doc_id, 1: BM25.doc_id, 2: None}))
    assert [r["user_choice"] for r in rows] == [BERT.doc_id, BM25.doc_id, None]
    assert rows[2]["selection"]["status"] == "not_found"
    assert rows[0]["candidates"][0]["scores"][0] == {"stage": "bm25", "rank": 2, "score": 3.1}


def test_filled_name():
    # the names citefinder fill gives them (cli.outputs.cited_name): one name for one thing
    assert exports.filled_name("paper.tex") == "paper.cited.tex"
    assert exports.filled_name("notes.MD") == "notes.cited.md"
    assert exports.filled_name("draft.pdf") == "draft.cited.txt"
    assert exports.filled_name(None) == "draft.cited.txt"


def test_candidates_frame_has_a_rank_per_stage():
    frame = tables.candidates_frame(results()[0].candidates)
    assert list(frame.columns) == ["#", "title", "year", "bm25 rank", "dense rank", "fused rank", "fused score"]
    assert frame["bm25 rank"].tolist()[0] == 2 and frame["bm25 rank"].isna().tolist() == [False, True]
    assert frame["dense rank"].tolist() == [1, 2]


def test_authors_short():
    assert tables.authors_short(("A", "B", "C", "D")) == "A, B, C et al."
    assert tables.authors_short(("A",)) == "A"
    assert tables.authors_short(()) == ""
