"""The Search page's results: each paper with its citation key, and one click to put it into a slot of the
draft open on the Cite page (cited alone, or added to what the slot cites)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.library.bibtex import bib_key_for
from citefinder.types import Paper, SlotResult
from citefinder.ui import paired_bib, render, resources, state
from citefinder.ui.cite import choices as ch
from citefinder.ui.markdown import escape_markdown

SHOWN = 10


def _slot_label(run: state.CiteRun, index: int) -> str:
    result = next(r for r in run.results if r.slot is not None and r.slot.index == index)
    sentence = result.slot.sentence if result.slot else ""
    return f"Slot {index + 1}: {sentence[:90]}{'…' if len(sentence) > 90 else ''}"


def slot_picker() -> tuple[state.CiteRun, int] | None:
    """Which slot of the Cite page's draft the results go into (None when no draft has been filled)."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    if run is None or not run.results:
        st.caption("Fill a draft on the **Cite** page to put these papers into its slots.")
        return None
    indexes = [r.slot.index for r in run.results if r.slot is not None]
    if st.session_state.get(state.SEARCH_SLOT) not in indexes:
        st.session_state[state.SEARCH_SLOT] = st.session_state.get(state.CITE_FOCUS, indexes[0])
        if st.session_state[state.SEARCH_SLOT] not in indexes:
            st.session_state[state.SEARCH_SLOT] = indexes[0]
    index = st.selectbox("Put a result into", indexes, key=state.SEARCH_SLOT,
                         format_func=lambda i: _slot_label(run, i))
    return run, int(index)


def not_in_run(run: state.CiteRun, library: Any, paper: Paper) -> str | None:
    """Why ``paper`` cannot go into a slot of ``run`` (None: it can): it is not in the library the draft was filled
    from (``library``: the .bib paired with the draft has a library of its own), so the draft would cite a key
    that is not there."""
    if library.get([paper.doc_id]):
        return None
    where = (f"{run.paired.name}, the .bib paired with the draft" if run.paired is not None
             else f"the library {library.path}, which the draft was filled from")
    return (f"“{paper.title[:60]}” is not in {where}: the draft would cite a key that is not there. Add its entry "
            "there and fill again, or pick among the slot's own candidates on the Cite page.")


def _put(settings: Settings, run: state.CiteRun, index: int, paper: Paper, alone: bool) -> None:
    library = paired_bib.run_library(run, resources.get_library(settings))
    if (why := not_in_run(run, library, paper)) is not None:  # said plainly, nothing changed
        st.toast(escape_markdown(why), icon=":material/block:")
        return
    if alone:
        ch.choose(settings, index, paper.doc_id, paper)
    else:
        ch.add(settings, run, index, paper.doc_id, paper)
    st.session_state[state.CITE_FOCUS] = index
    st.toast(f"Slot {index + 1} now cites “{paper.title[:60]}”" + ("" if alone else " too") + ".",
             icon=":material/check:")


def ranked_results(settings: Settings, result: SlotResult) -> None:
    """The ranking's top papers, numbered, with their keys; each can go into the chosen slot."""
    target = slot_picker()
    for i, cand in enumerate(result.candidates[:SHOWN], start=1):
        paper = cand.paper
        row = st.container(horizontal=True, wrap=False, vertical_alignment="center")
        with row.container(width="stretch"):
            render.paper_card(paper, number=i)
            st.caption(f"key {escape_markdown(paper.key or bib_key_for(paper))}")
        if target is not None:
            run, index = target
            row.button("Use in slot", key=f"search_use_{i}", on_click=_put, args=(settings, run, index, paper, True),
                       help=f"Slot {index + 1} cites this paper alone.")
            row.button("Add to slot", key=f"search_add_{i}", icon=":material/add:", type="tertiary",
                       on_click=_put, args=(settings, run, index, paper, False),
                       help=f"Slot {index + 1} cites it after the papers it cites already.")
