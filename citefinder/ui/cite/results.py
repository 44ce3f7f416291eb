"""The Cite page's results: the LLM banner, the summary and downloads, and every slot as cards or as a
compact table with filters.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.store import Library
from citefinder.text.slots import looks_like_latex
from citefinder.types import SlotResult
from citefinder.ui import exports, paired_bib, render, state
from citefinder.ui.cite.cards import positions_in_sentence, slot_card
from citefinder.ui.cite.choices import (
    ALL,
    CARDS,
    NOT_FOUND,
    NOT_FOUND_S,
    TABLE,
    UNSURE_FILTER,
    current_choices,
    matches_filter,
    next_to_check,
    slot_status,
)
from citefinder.ui.cite.draft import extra_state, slot_of
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import UNLIKELY, UNSURE, confidence_label


def llm_banner(run: state.CiteRun, settings: Settings) -> None:
    """One banner when the LLM failed during the fill: how often, and what decided instead."""
    selects = [r.trace("select") for r in run.results]
    failed = [t for t in selects if t is not None and t.details.get("llm_error")]
    skipped = [t for t in selects if t is not None and t.details.get("llm_skipped")]
    if not failed and not skipped:
        return
    reason = (failed[-1].details["llm_error"] if failed else skipped[0].details.get("llm_failure", ""))
    model = settings.llm_model or "the LLM"
    if skipped:
        head = (f"The LLM ({model}) failed {len(failed)} times, so it was not asked again in this fill: "
                f"{len(failed) + len(skipped)} of {len(run.results)} slots were decided without it")
    else:
        head = f"The LLM ({model}) failed on {len(failed)} of {len(run.results)} slots; those were decided without it"
    st.warning(
        escape_markdown(f"{head}, by the confidence rule (the top candidate when BM25 and dense agree on it). "
                        f"Last error: {reason[:200]}") + "  \nCheck the endpoint on the **Settings** page.",
        icon=":material/cloud_off:",
    )


def summary_and_downloads(run: state.CiteRun, choices: dict[int, str | None],
                          library: Library | None = None) -> dict[int, str]:
    """Counts (with the user's picks) and the three downloads; returns slot index -> bib key."""
    n = len(run.results)
    statuses = [slot_status(r, choices) for r in run.results]
    chosen = sum(v is not None for v in choices.values())
    to_check = sum(s in (NOT_FOUND_S, UNSURE, UNLIKELY) for s in statuses)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Slots", n if n == run.total or not run.total else f"{n} of {run.total}")
    c2.metric("Cited", chosen, help="Slots with a paper: the selector's or your pick.")
    c3.metric("To check", to_check, help="Not found, or the selector is unsure and you have not picked yet.")
    c4.metric("Time", f"{run.elapsed_s:.1f} s")
    extra = extra_state()
    command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
    taken = (lambda key: library.by_key(key) is not None) if library is not None else None
    try:
        bib, keys = exports.bibliography(run.results, choices, extra, taken=taken)
        filled = exports.filled_draft(run.text, run.results, keys, command=command)
    except CitefinderError as e:
        render.error_box(e)
        return {}
    downloads = st.container(horizontal=True)  # full labels, wrapped onto a second line when the page is narrow
    n_papers = len(set(keys.values()))
    downloads.download_button(f"Download .bib ({n_papers} paper{'s' if n_papers != 1 else ''})",
                              bib or "% no paper chosen\n", file_name="references.bib", mime="application/x-bibtex",
                              icon=":material/download:", on_click="ignore", key="download_bib", disabled=not chosen)
    downloads.download_button(f"Download draft with \\cite ({len(keys)} of {n} filled)", filled,
                              file_name=exports.filled_name(run.source_name), mime="text/plain",
                              icon=":material/description:", on_click="ignore", key="download_draft")
    downloads.download_button("Download results (JSON)", exports.results_json(run.results, choices, keys),
                              file_name="citefinder-results.json", mime="application/json",
                              icon=":material/data_object:", on_click="ignore", key="download_json")
    if looks_like_latex(run.text) and any(r.slot is not None and not r.slot.command for r in run.results):
        st.selectbox("Command for plain [CITATION] markers", paired_bib.COMMANDS, key=paired_bib.COMMAND,
                     help="Placeholders written as \\citep{?}, \\citet{?} ... keep their own command.")
    return keys


def compact_frame(run: state.CiteRun, choices: dict[int, str | None]) -> pd.DataFrame:
    """One row per slot: slot text, choice, confidence in words, status."""
    extra = extra_state()
    rows = []
    for r in run.results:
        paper = exports.paper_for(r, choices.get(slot_of(r).index), extra)
        rows.append({
            "slot": slot_of(r).index + 1,
            "text": slot_of(r).sentence if len(slot_of(r).sentence) <= 90 else slot_of(r).sentence[:89] + "…",
            "choice": paper.title if paper else "",
            "confidence": confidence_label(r.selection.confidence),
            "status": slot_status(r, choices),
        })
    return pd.DataFrame(rows, columns=["slot", "text", "choice", "confidence", "status"])


def _table_selected(run: state.CiteRun, shown: list[SlotResult]) -> None:
    event = st.session_state.get(f"compact_{run.run_id}")
    rows = getattr(getattr(event, "selection", None), "rows", None) or (event or {}).get("selection", {}).get("rows")
    if rows:
        st.session_state[state.CITE_FOCUS] = shown[rows[0]].slot.index


def results_view(run: state.CiteRun, library: Library, settings: Settings) -> None:
    """Banner, summary, downloads; then the slots as cards or as a compact table with filters."""
    if st.session_state.get(state.CITE_TEXT, run.text) != run.text:
        st.warning("The text changed since these results were made; press **Find citations** again to update them.")
    if run.error:
        st.error(escape_markdown(f"Stopped after {len(run.results)} of {run.total} slots: {run.error}"),
                 icon=":material/error:")
    llm_banner(run, settings)
    choices = current_choices(run)
    library = paired_bib.run_library(library)
    keys = summary_and_downloads(run, choices, library)
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    st.session_state.setdefault(state.CITE_VIEW, CARDS)
    st.session_state.setdefault(state.CITE_FILTER, ALL)
    view = controls.segmented_control("View", [CARDS, TABLE], key=state.CITE_VIEW, persist_state="session")
    which = controls.segmented_control("Show", [ALL, NOT_FOUND, UNSURE_FILTER], key=state.CITE_FILTER,
                                 persist_state="session") or ALL
    controls.button("Next to check", icon=":material/skip_next:", shortcut="n", on_click=next_to_check,
              args=(run, st.session_state.get(state.CITE_FOCUS)), help="The next slot not found or unsure (key n).")
    positions = dict(zip((slot_of(r).index for r in run.results), positions_in_sentence(run.results), strict=True))
    shown = [r for r in run.results if matches_filter(slot_status(r, choices), which)]
    if not shown:
        st.caption("No slot matches this filter.")
        return
    if view == TABLE:
        st.dataframe(compact_frame(run, choices).iloc[[run.results.index(r) for r in shown]], hide_index=True,
                     width="stretch", key=f"compact_{run.run_id}", on_select=lambda: _table_selected(run, shown),
                     selection_mode="single-row",
                     column_config={"text": st.column_config.TextColumn(width="medium"),
                                    "choice": st.column_config.TextColumn(width="medium")})
        focus = st.session_state.get(state.CITE_FOCUS)
        target = next((r for r in run.results if slot_of(r).index == focus), None)
        if target is None:
            st.caption("Select a row to open its slot here.")
            return
        slot_card(settings, run, target, positions[slot_of(target).index], choices.get(slot_of(target).index),
                  keys.get(slot_of(target).index), library)
        return
    for result in shown:
        index = slot_of(result).index
        slot_card(settings, run, result, positions[index], choices.get(index), keys.get(index), library)
