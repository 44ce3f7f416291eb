"""The Cite page's results: the LLM banner, the summary and downloads, and every slot as cards or as a
compact table with filters.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.index.memory import memory_missing
from citefinder.library import sample
from citefinder.library.store import Library
from citefinder.text.slots import looks_like_latex
from citefinder.types import SlotResult
from citefinder.ui import exports, paired_bib, picks, render, state, tables
from citefinder.ui.cite.cards import positions_in_sentence, slot_card
from citefinder.ui.cite.choices import (
    ALL,
    CARDS,
    LEFT_EMPTY,
    NOT_FOUND,
    NOT_FOUND_S,
    TABLE,
    UNSURE_FILTER,
    USER_PICK,
    current_choices,
    focus,
    matches_filter,
    next_to_check,
    slot_probability,
    slot_status,
    step,
    undo,
)
from citefinder.ui.cite.choices import (
    statuses as all_statuses,
)
from citefinder.ui.cite.draft import choices_state, extra_state, history_state, slot_of
from citefinder.ui.cite.literature import current_keys, run_keys
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import LIKELY, UNLIKELY, UNSURE

# slot cards drawn at once on a long draft (bench/review_nav.py at bc9259c: every card of a 300-slot draft took
# seconds a key; the browser's redraw grows with the cards drawn: 10 a page took a third more than 5); a draft of up to
# two pages is drawn whole
PAGE = 5
_JSON = "cite_results_json"  # (what the results file was made from, its text): made again only when that changes


def llm_banner(run: state.CiteRun, settings: Settings) -> None:
    """One banner when the LLM failed during the fill: how often, and what decided instead."""
    selects = [r.trace("select") for r in run.results]
    failed = [t for t in selects if t is not None and t.details.get("llm_error")]
    skipped = [t for t in selects if t is not None and t.details.get("llm_skipped")]
    if not failed and not skipped:
        return
    reason = (failed[-1].details["llm_error"] if failed else skipped[0].details.get("llm_failure", ""))
    if skipped:
        head = (f"{_llm(settings)} failed {len(failed)} times, so it was not asked again in this fill: "
                f"{len(failed) + len(skipped)} of {len(run.results)} slots were decided without it")
    else:
        head = f"{_llm(settings)} failed on {len(failed)} of {len(run.results)} slots; those were decided without it"
    if not settings.llm_model:  # the settings were reset since: a note, not an alarm
        st.caption(escape_markdown(f"{head}. No LLM is set now: the next Find citations uses the confidence rule "
                                   "alone."))
        return
    after = "  \nCheck the endpoint on the **Settings** page."
    st.warning(
        escape_markdown(f"{head}, by the confidence rule (the top candidate when BM25 and dense agree on it). "
                        f"Last error: {reason[:200]}") + after,
        icon=":material/cloud_off:",
    )


def _llm(settings: Settings) -> str:
    """"The LLM (model)" while one is set; after a reset, the run's LLM is no longer named."""
    return f"The LLM ({settings.llm_model})" if settings.llm_model else "The LLM of this fill"


def restricted_line(run: state.CiteRun, library: Library) -> None:
    """Which papers the suggestions came from: the paired .bib alone, or the whole library (and the sample)."""
    if run.paired is not None:
        st.caption(f":material/filter_alt: Suggestions come from your **{escape_markdown(run.paired.name)}** only "
                   f"({run.paired.words()}); the downloaded .bib holds its entries as you wrote them.")
        return
    try:
        counts = sample.counts(library)
    except CitefinderError:
        return
    hidden = counts.sample and counts.own and not st.session_state[state.SETTINGS].suggest_sample
    line = f"Suggestions come from your whole library ({counts.own:,} papers of yours"
    if counts.sample:
        line += f"; the {counts.sample} sample papers are {'left out' if hidden else 'included'}"
    st.caption(f":material/library_books: {line}).")


def summary_and_downloads(run: state.CiteRun, choices: picks.Picks, library: Library | None = None,
                          said: dict[int, str] | None = None) -> dict[int, str]:
    """Counts (with the user's picks) and the three downloads; returns slot index -> its keys ("a,b").
    ``said``: every slot's status, when the caller has them."""
    n = len(run.results)
    statuses = list((said if said is not None else all_statuses(run, choices)).values())
    chosen = sum(bool(v) for v in choices.values())
    to_check = sum(s in (NOT_FOUND_S, UNSURE, UNLIKELY) for s in statuses)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Slots", n if n == run.total or not run.total else f"{n} of {run.total}")
    c2.metric("Cited", chosen, help="Slots with at least one paper: the ones auto-filled, plus your picks "
              "(the fill's line counts the auto-filled ones alone).")
    c3.metric("To check", to_check, help="Not found, or the selector is unsure and you have not picked yet.")
    c4.metric("Time", f"{run.elapsed_s:.1f} s")
    extra = extra_state()
    command = st.session_state.get(paired_bib.COMMAND) or paired_bib.COMMANDS[0]
    order: exports.Order = "file" if st.session_state.get(state.CITE_ORDER) == "file" else "cited"
    try:
        bib, keys = exports.bibliography(run.results, choices, extra, keys=run_keys(library), order=order,
                                         current=library.get if library is not None else None)
        filled = exports.filled_draft(run.text, run.results, keys, command=command)
    except CitefinderError as e:
        render.error_box(e)
        return {}
    downloads = st.container(horizontal=True)  # full labels, wrapped onto a second line when the page is narrow
    n_papers = len({k for v in keys.values() for k in v.split(",")})
    downloads.download_button(f"Download .bib ({n_papers} paper{'s' if n_papers != 1 else ''})",
                              bib or "% no paper chosen\n", file_name="references.bib", mime="application/x-bibtex",
                              icon=":material/download:", on_click="ignore", key="download_bib", disabled=not chosen,
                              help="The references file: what `citefinder fill --bib-out FILE.bib` writes")
    downloads.download_button(f"Download draft with \\cite ({len(keys)} of {n} filled)", filled,
                              file_name=exports.filled_name(run.source_name), mime="text/plain",
                              icon=":material/description:", on_click="ignore", key="download_draft",
                              help="The filled draft: what `citefinder fill -o FILE` writes")
    downloads.download_button("Download results (JSON)", _results_json(run, choices, keys),
                              file_name="citefinder-results.json", mime="application/json",
                              icon=":material/data_object:", on_click="ignore", key="download_json")
    options = st.container(horizontal=True, vertical_alignment="bottom")
    options.segmented_control("Entries in the .bib", list(exports.ORDERS), key=state.CITE_ORDER, default="cited",
                              format_func=lambda o: exports.ORDERS.get(o, o),
                              help="Only the papers cited, in the order the draft cites them or in the order of "
                                   "the .bib they came from. Entries read from your .bib are written as you wrote "
                                   "them.")
    if looks_like_latex(run.text) and any(r.slot is not None and not r.slot.command for r in run.results):
        options.selectbox("Command for plain [CITATION] markers", paired_bib.COMMANDS, key=paired_bib.COMMAND,
                          help="Placeholders written as \\citep{?}, \\citet{?} ... keep their own command.")
    return keys


def _results_json(run: state.CiteRun, choices: picks.Picks, keys: dict[int, str]) -> str:
    """The results file, made again only when the run, the picks or the keys changed (moving through the
    slots changes none of them; the whole run as JSON took most of a long draft's page run)."""
    picked = set(choices_state())
    made_from = repr((sorted(choices.items()), sorted(keys.items()), sorted(picked)))
    cached = st.session_state.get(_JSON)
    if cached is None or cached[0] is not run.results or cached[1] != made_from:  # the same results object
        cached = (run.results, made_from, exports.results_json(run.results, choices, keys, picked=picked,
                                                                 run_keys=current_keys()))
        st.session_state[_JSON] = cached
    return cached[2]


YEARS_TO_SAY = 5  # papers the draft must cite with confidence before "newer than all it cites" means anything


def latest_cited_year(run: state.CiteRun, choices: picks.Picks, said: dict[int, str] | None = None) -> int | None:
    """The newest year among the papers the draft cites with confidence (likely right, or the user's picks):
    a candidate newer than that is flagged on its card. None (nothing flagged) while the draft cites fewer than
    :data:`YEARS_TO_SAY` such papers: a two-sentence draft's newest cite says nothing about what it may cite."""
    years = []
    said = said if said is not None else all_statuses(run, choices)
    for r in run.results:
        status = said[slot_of(r).index]
        if status not in (LIKELY, USER_PICK):
            continue
        for doc_id in choices.get(slot_of(r).index, ()):
            paper = exports.paper_for(r, doc_id, extra_state())
            if paper is not None and paper.year:
                years.append(paper.year)
    return max(years) if len(years) >= YEARS_TO_SAY else None


def compact_frame(run: state.CiteRun, choices: picks.Picks) -> pd.DataFrame:
    """One row per slot: its whole sentence, what it cites, the probability (a number: sorting sorts by it;
    blank where the user decided), status in words."""
    extra = extra_state()
    rows = []
    for r in run.results:
        index = slot_of(r).index
        papers = [p for i in choices.get(index, ()) if (p := exports.paper_for(r, i, extra)
                                                         or exports.paper_of(run.results, i, extra))]
        status = slot_status(r, choices)
        rows.append({
            "slot": index + 1,
            "text": slot_of(r).sentence,
            "cites": " + ".join(p.title for p in papers),
            "probability": None if status in (USER_PICK, LEFT_EMPTY) else round(slot_probability(r), 2),
            "status": status,
        })
    frame = pd.DataFrame(rows, columns=["slot", "text", "cites", "probability", "status"])
    frame["probability"] = frame["probability"].astype("Float64")
    return frame


def _table_selected(run: state.CiteRun, shown: list[SlotResult]) -> None:
    event = st.session_state.get(f"compact_{run.run_id}")
    rows = getattr(getattr(event, "selection", None), "rows", None) or (event or {}).get("selection", {}).get("rows")
    if rows:
        st.session_state[state.CITE_FOCUS] = shown[rows[0]].slot.index


def _note() -> None:
    note = st.session_state.get(state.CITE_NOTE)
    if note:
        st.info(escape_markdown(note), icon=":material/published_with_changes:")


def _toolbar(settings: Settings, run: state.CiteRun, focused: int | None) -> str:
    """View, filter, and moving through the review (n / p, from the slot the user moved to last) with undo (u);
    returns the filter."""
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    st.session_state.setdefault(state.CITE_VIEW, CARDS)
    st.session_state.setdefault(state.CITE_FILTER, ALL)
    controls.segmented_control("View", [CARDS, TABLE], key=state.CITE_VIEW, persist_state="session")
    which = controls.segmented_control("Show", [ALL, NOT_FOUND, UNSURE_FILTER], key=state.CITE_FILTER,
                                       persist_state="session") or ALL
    controls.button("Previous", icon=":material/skip_previous:", shortcut="p", on_click=step,
                    args=(run, focused, -1), help="The previous slot to check (key p).")
    controls.button("Next to check", icon=":material/skip_next:", shortcut="n", on_click=next_to_check,
                    args=(run, focused), help="The next slot not found or unsure, brought into view (key n).")
    controls.button("Undo", icon=":material/undo:", shortcut="u", on_click=undo, args=(settings, run),
                    disabled=not history_state(),
                    help="Undo your last change to the picks in this browser session (key u): its slot is shown.")
    return which


def results_view(run: state.CiteRun, library: Library, settings: Settings) -> None:
    """Banner, what the results come from, summary, downloads; then the slots as cards or as a compact table
    with the slot in review above it."""
    choices = current_choices(run)
    said = all_statuses(run, choices)  # every slot's status, once a run of the page
    library = paired_bib.run_library(run, library)
    with st.container(key="cite_results"):  # brought into view when a fill ends
        if st.session_state.get(state.CITE_TEXT, run.text) != run.text:
            st.warning("The text changed since these results were made; press **Find citations** again to update "
                       "them (picks of unchanged sentences are kept).")
        if run.error:
            st.error(escape_markdown(f"Stopped after {len(run.results)} of {run.total} slots: {run.error}"),
                     icon=":material/error:")
        llm_banner(run, settings)
        _note()
        restricted_line(run, library)
        keys = summary_and_downloads(run, choices, library, said)
    focused = focus(run)
    which = _toolbar(settings, run, focused)  # n moves on from the slot in review, the first one included
    render.scroll_into_view(st.session_state.pop(state.CITE_SCROLL, None))
    latest = latest_cited_year(run, choices, said)
    positions = dict(zip((slot_of(r).index for r in run.results), positions_in_sentence(run.results), strict=True))
    shown = [r for r in run.results if matches_filter(said[slot_of(r).index], which)]
    memory = memory_missing(library) is None  # no memory: no candidate is "cited elsewhere" (not asked 50 times)

    def card(result: SlotResult) -> None:
        index = slot_of(result).index
        slot_card(settings, run, result, positions[index], choices.get(index, ()), keys.get(index), library,
                  focused=index == focused, latest=latest, choices=choices, status=said[index], memory=memory)

    if st.session_state.get(state.CITE_VIEW) == TABLE:
        target = next((r for r in run.results if slot_of(r).index == focused), None)
        if target is not None:
            card(target)  # the slot in review, above the table: in view when n / p move to it
        if not shown:
            st.caption("No slot matches this filter.")
            return
        st.dataframe(tables.shown(compact_frame(run, choices).iloc[[run.results.index(r) for r in shown]], 2),
                     hide_index=True,
                     width="stretch", key=f"compact_{run.run_id}", on_select=lambda: _table_selected(run, shown),
                     selection_mode="single-row",
                     column_config={
                         "text": st.column_config.TextColumn("sentence", width="large",
                                                             help="The slot's whole sentence: select the row to "
                                                                  "open it above, or widen the column."),
                         "cites": st.column_config.TextColumn(width="medium"),
                         "probability": st.column_config.NumberColumn(
                             help="The probability that the engine's pick is the cited paper "
                                                 "(blank: you decided). Sorting sorts by it.")})
        if target is None:
            st.caption("Select a row to open its slot here.")
        return
    if not shown:
        st.caption("No slot matches this filter.")
        return
    for result in page_of_slots(run, shown, focused):
        card(result)


def page_of_slots(run: state.CiteRun, shown: list[SlotResult], focused: int | None) -> list[SlotResult]:
    """The cards drawn: all of them up to twice :data:`PAGE` slots, else the page of :data:`PAGE` holding the slot in
    review (n / p move the page with it), with a choice of page above them; choosing a page puts its first slot
    in review. A long draft's page is drawn in a fraction of a second instead of every card at each key."""
    if len(shown) <= 2 * PAGE:
        return shown
    pages = [shown[i:i + PAGE] for i in range(0, len(shown), PAGE)]
    labels = [f"Slots {slot_of(p[0]).index + 1}–{slot_of(p[-1]).index + 1}" for p in pages]
    where = next((n for n, p in enumerate(pages) if any(slot_of(r).index == focused for r in p)), None)
    key = f"cite_page_{run.run_id}"
    if where is not None:
        st.session_state[key] = labels[where]
    elif st.session_state.get(key) not in labels:
        st.session_state[key] = labels[0]

    def moved() -> None:
        chosen = pages[labels.index(st.session_state[key])]
        first = slot_of(chosen[0]).index
        st.session_state[state.CITE_FOCUS] = first
        st.session_state[state.CITE_SCROLL] = f"slot_{run.run_id}_{first}"

    st.selectbox(f"{len(shown)} slots, {PAGE} a page", labels, key=key, on_change=moved,
                 help="Keys n / p move through every slot to check, page after page.")
    return pages[labels.index(st.session_state[key])]
