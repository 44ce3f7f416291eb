"""One slot of the Cite page as a card: its sentence, the top candidates one click away with the evidence
for each, and a search of the whole library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.bibtex import bib_key_for
from citefinder.library.store import Library
from citefinder.pipeline.evidence import best_sentence
from citefinder.types import Paper, SlotResult
from citefinder.ui import exports, paired_bib, render, state
from citefinder.ui.cite.choices import (
    LEFT_EMPTY,
    NOT_FOUND_S,
    USER_PICK,
    accept,
    choose,
    current_choices,
    shown_confidences,
    slot_status,
)
from citefinder.ui.cite.draft import choices_state, extra_state, slot_of
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import LIKELY, confidence_label

TOP_CHOICES = 5  # candidates offered as one-click choices per slot
SEARCH_K = 8
NO_MATCH = "No confident match — pick one of these"


def _candidate_row(settings: Settings, run: state.CiteRun, result: SlotResult, paper: Paper, number: int | str,
                   chosen: bool, confidence: float | None, key: str) -> None:
    """One candidate: number, key, title, authors, year, evidence sentence; a one-click button."""
    # the text takes what the button leaves: the button's label is never cut, even at 800 px
    row = st.container(horizontal=True, wrap=False, vertical_alignment="center")
    bib_key = getattr(paper, "key", None) or bib_key_for(paper)
    head = f"{number}\\. **{escape_markdown(paper.title)}**" + (" :green[✓ chosen]" if chosen else "")
    meta = [render.paper_meta(paper, max_authors=3), f"key {escape_markdown(bib_key)}"]
    if confidence is not None:
        meta.append(escape_markdown(confidence_label(confidence)))
    lines = [head, " · ".join(m for m in meta if m)]
    slot_text = result.slot.focus or result.slot.sentence if result.slot else result.query.text
    snippet = best_sentence(paper.abstract, slot_text)
    if snippet:
        lines.append(f":gray[“{escape_markdown(snippet)}”]")
    row.markdown("  \n".join(lines), width="stretch")
    row.button("Chosen" if chosen else "Use this", key=key, type="primary" if chosen else "secondary",
                 icon=":material/check_circle:" if chosen else None, disabled=chosen, width="content",
                 on_click=choose, args=(settings, slot_of(result).index, paper.doc_id, paper))


def _library_search(settings: Settings, run: state.CiteRun, result: SlotResult, choice: str | None,
                    library: Library) -> None:
    index = slot_of(result).index
    box = st.expander("Search the whole library", key=f"libsearch_{run.run_id}_{index}", on_change="rerun",
                      icon=":material/travel_explore:")
    if not box.open:
        return
    with box:
        query = st.text_input("Title, authors or words", key=f"libq_{run.run_id}_{index}",
                              placeholder="e.g. Vaswani attention")
        if not query.strip():
            return
        try:
            papers = library.get([h.doc_id for h in library.bm25_search(query, SEARCH_K)])
        except CitefinderError as e:
            render.error_box(e)
            return
        if not papers:
            st.caption("Nothing in your library matches those words.")
        for i, paper in enumerate(papers, 1):
            _candidate_row(settings, run, result, paper, i, paper.doc_id == choice, None,
                           key=f"{run.pick_key(index)}_lib_{i}")


def slot_card(settings: Settings, run: state.CiteRun, result: SlotResult, which: int, choice: str | None,
              bib_key: str | None, library: Library) -> None:
    """One slot: sentence, status in words, top candidates one click away, library search, \\cite, trace."""
    slot, sel = slot_of(result), result.selection
    status = slot_status(result, current_choices(run))
    with st.container(border=True, key=f"slot_{run.run_id}_{slot.index}"):
        head, badge = st.columns([0.6, 0.4], vertical_alignment="center")
        head.markdown(f"**Slot {slot.index + 1}**")
        with badge:
            colors: dict[str, Literal["green", "blue", "gray", "orange"]] = {
                LIKELY: "green", USER_PICK: "blue", LEFT_EMPTY: "gray"}
            color = colors.get(status, "orange")
            label = status if status in (USER_PICK, LEFT_EMPTY, NOT_FOUND_S) else confidence_label(sel.confidence)
            st.badge(label, color=color, icon=":material/check:" if color in ("green", "blue") else ":material/help:")
        st.markdown(render.highlight_slot(slot.sentence, which))
        if sel.paper is None and slot.index not in choices_state():
            if result.candidates:
                st.warning(f"**{NO_MATCH}.** Details are in the trace below.", icon=":material/search_off:")
            else:
                st.warning("**Not found in your library.** Search it below, or leave the slot empty.",
                           icon=":material/search_off:")
        confidences = shown_confidences(result)
        shown = list(result.candidates[:TOP_CHOICES])
        for i, cand in enumerate(shown, 1):
            _candidate_row(settings, run, result, cand.paper, i, cand.doc_id == choice,
                           confidences.get(cand.doc_id), key=f"{run.pick_key(slot.index)}_{i}")
        if choice is not None and all(c.doc_id != choice for c in shown):
            paper = exports.paper_for(result, choice, extra_state())
            if paper is not None:
                _candidate_row(settings, run, result, paper, "·", True, confidences.get(choice),
                               key=f"{run.pick_key(slot.index)}_chosen")
        actions = st.container(horizontal=True, vertical_alignment="center")
        if bib_key:
            command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
            actions.code(exports.cite_snippet(result, bib_key, command), language="latex", width="content")
        actions.button("Leave empty", key=f"{run.pick_key(slot.index)}_none", type="tertiary",
                  icon=":material/block:", disabled=choice is None and slot.index in choices_state(),
                  on_click=choose, args=(settings, slot.index, None))
        actions.button("Accept, next", key=f"{run.pick_key(slot.index)}accept", type="tertiary",
                  icon=":material/done_all:", on_click=accept, args=(settings, run, slot.index, choice),
                  help="Keep this choice and go to the next slot to check.")
        _library_search(settings, run, result, choice, library)
        trace = st.expander("Trace: how this paper was chosen", key=run.trace_key(slot.index), on_change="rerun",
                            icon=":material/account_tree:")
        if trace.open:
            with trace:
                render.trace_panel(result, library.get)


def positions_in_sentence(results: Sequence[SlotResult]) -> list[int]:
    """For each slot, which [CITATION] of its sentence it is (slots sharing a sentence are adjacent)."""
    out: list[int] = []
    for i, r in enumerate(results):
        prev = results[i - 1] if i else None
        same = prev is not None and slot_of(prev).sentence == slot_of(r).sentence
        out.append(out[-1] + 1 if same else 0)
    return out
