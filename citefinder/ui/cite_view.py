"""The Cite page's parts: draft input, a fill with live progress, fast picking among candidates, downloads.

Nothing is lost on navigation: the draft text, the results and the user's picks live under named
``st.session_state`` keys (:mod:`citefinder.ui.state`) and in the library's last-draft file
(:mod:`citefinder.workspace`); a fill runs on a worker thread (:mod:`citefinder.ui.fill_job`) that
goes on while the user is on another page.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import pandas as pd
import streamlit as st

from citefinder import workspace
from citefinder.bibtex import bib_key_for
from citefinder.config import Settings
from citefinder.drafts import extract_draft_text
from citefinder.errors import CitefinderError
from citefinder.evidence import best_sentence
from citefinder.library.store import Library
from citefinder.slots import find_slots, looks_like_latex
from citefinder.types import Paper, Slot, SlotResult
from citefinder.ui import exports, paired_bib, render, resources, state, tables
from citefinder.ui.fill_job import FillJob
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import LIKELY, UNLIKELY, UNSURE, confidence_label, confidence_words

DRAFT_TYPES = ["pdf", "tex", "txt", "md"]
TOP_CHOICES = 5  # candidates offered as one-click choices per slot
SEARCH_K = 8
POLL_S = 0.25
CARDS, TABLE = "Cards", "Table"
ALL, NOT_FOUND, UNSURE_FILTER = "All", "Not found", "Unsure"
NO_MATCH = "No confident match — pick one of these"
EXAMPLE = (
    "Recurrent networks long dominated sequence modelling. Then the Transformer showed that attention is all "
    "you need [CITATION]. This changed the field quickly. Pre-training deep bidirectional transformers improved "
    "language understanding [CITATION].\n\nSearch engines still matter in this picture. The probabilistic "
    "relevance framework behind BM25 remains a strong lexical baseline [CITATION]. Neural methods arrived later. "
    "Dense passage retrieval embeds questions and passages for open-domain question answering [CITATION]. "
    "Both can be combined: reciprocal rank fusion merges the two rankings [CITATION]."
)


# --- the draft: session state and the library's last-draft file ----------------------------------------------------


def slot_of(result: SlotResult) -> Slot:
    """A draft result's slot (a Find-citations run holds slot results only, never a search's)."""
    if result.slot is None:
        raise ValueError("a Find-citations result without its slot")
    return result.slot


def _library_folder(settings: Settings) -> str:
    return str(settings.library)


def choices_state() -> dict[int, str | None]:
    return st.session_state.setdefault(state.CITE_CHOICES, {})


def extra_state() -> dict[str, Paper]:
    return st.session_state.setdefault(state.CITE_EXTRA, {})


def save_workspace(settings: Settings) -> None:
    """Write the current draft, results and picks to the library's last-draft file."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    draft = workspace.Draft(
        text=st.session_state.get(state.CITE_DRAFT, ""),
        source_name=st.session_state.get(state.CITE_SOURCE),
        results=run.results if run else (),
        choices=dict(choices_state()),
        extra_papers=dict(extra_state()),
        elapsed_s=run.elapsed_s if run else 0.0,
    )
    try:
        workspace.save_draft(_library_folder(settings), draft)
    except OSError as e:
        st.toast(f"Could not save the draft: {escape_markdown(e)}", icon=":material/warning:")


def restore_last_draft(settings: Settings) -> None:
    """Once per session: bring back this library's last draft (text, results, picks) from disk."""
    if st.session_state.get(state.CITE_RESTORED):
        return
    st.session_state[state.CITE_RESTORED] = True
    if st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN):
        return
    draft = workspace.load_draft(_library_folder(settings))
    if draft is None or not (draft.text or draft.results):
        return
    st.session_state[state.CITE_DRAFT] = draft.text
    st.session_state[state.CITE_TEXT] = draft.text
    st.session_state[state.CITE_SOURCE] = draft.source_name
    if draft.results:
        total = len(find_slots(draft.text, settings.context_sentences)) if draft.text else len(draft.results)
        st.session_state[state.CITE_RUN] = state.CiteRun(draft.text, draft.results, draft.elapsed_s,
                                                         draft.source_name, total=max(total, len(draft.results)))
    st.session_state[state.CITE_CHOICES] = dict(draft.choices)
    st.session_state[state.CITE_EXTRA] = dict(draft.extra_papers)
    when = datetime.fromtimestamp(draft.saved_at).strftime("%Y-%m-%d %H:%M") if draft.saved_at else "earlier"
    st.toast(f"Restored your last draft ({when}).", icon=":material/history:")


def start_over(settings: Settings) -> None:
    """Forget the draft, its results and picks, here and on disk (a fill in progress is stopped)."""
    job: FillJob | None = st.session_state.pop(state.CITE_JOB, None)
    if job is not None:
        job.cancel()
    for key in (state.CITE_RUN, state.CITE_CHOICES, state.CITE_EXTRA, state.CITE_SOURCE, state.CITE_FOCUS,
                state.CITE_UPLOAD_SEEN):
        st.session_state.pop(key, None)
    st.session_state[state.CITE_DRAFT] = ""
    st.session_state[state.CITE_TEXT] = ""
    workspace.clear_draft(_library_folder(settings))


def _text_changed(settings: Settings) -> None:
    st.session_state[state.CITE_DRAFT] = st.session_state.get(state.CITE_TEXT, "")
    save_workspace(settings)


def _use_example(settings: Settings) -> None:
    st.session_state[state.CITE_TEXT] = EXAMPLE
    st.session_state[state.CITE_SOURCE] = None
    _text_changed(settings)


def draft_input(settings: Settings) -> str:
    """Uploader and text area; an uploaded draft's text replaces the text area's content."""
    if state.CITE_TEXT not in st.session_state:  # back from another page: the widget forgot, the draft did not
        st.session_state[state.CITE_TEXT] = st.session_state.get(state.CITE_DRAFT, "")
    upload = st.file_uploader(
        "Upload a draft (PDF, LaTeX, text or Markdown)", type=DRAFT_TYPES, key=state.CITE_UPLOAD,
        help="Mark each place that needs a reference with [CITATION].",
    )
    if upload is not None and st.session_state.get(state.CITE_UPLOAD_SEEN) != upload.file_id:
        st.session_state[state.CITE_UPLOAD_SEEN] = upload.file_id
        try:
            st.session_state[state.CITE_TEXT] = extract_draft_text(upload.getvalue(), upload.name)
            st.session_state[state.CITE_SOURCE] = upload.name
            _text_changed(settings)
        except CitefinderError as e:
            render.error_box(e)
    paired_bib.bib_uploader()
    row = st.container(horizontal=True, vertical_alignment="center")  # wraps instead of cutting labels when narrow
    row.button("Try an example", type="tertiary", icon=":material/lightbulb:", on_click=_use_example, args=(settings,))
    has_work = bool(st.session_state.get(state.CITE_DRAFT) or st.session_state.get(state.CITE_RUN))
    row.button("Start over", type="tertiary", icon=":material/restart_alt:", on_click=start_over, args=(settings,),
              disabled=not has_work, help="Clear the draft, its results and your picks (also the saved copy).")
    source = st.session_state.get(state.CITE_SOURCE)
    if source:
        row.caption(f"Text from **{escape_markdown(source)}**")
    text = st.text_area(
        "...or paste your text", key=state.CITE_TEXT, height=180, on_change=_text_changed, args=(settings,),
        placeholder="Self-attention alone can replace recurrence [CITATION]. ...",
    )
    st.session_state[state.CITE_DRAFT] = text
    st.caption("Your draft, results and picks are kept for this library in "
               f"{escape_markdown(workspace.draft_path(_library_folder(settings)))} until you start over.")
    return text


def slot_count_line(slots: Sequence[Slot]) -> None:
    if slots:
        st.markdown(f"**{len(slots)}** citation slot{'s' if len(slots) != 1 else ''} found.")
    else:
        st.caption("No slot yet: mark each place that needs a reference with [CITATION], [CITE], [?] or \\cite{?}.")


# --- filling: a worker thread, live progress ------------------------------------------------------------------------


def find_button(settings: Settings, text: str) -> None:
    """*Find citations*: always enabled, so the first click right after pasting works."""
    job: FillJob | None = st.session_state.get(state.CITE_JOB)
    running = job is not None and not job.snapshot().finished
    if not st.button("Find citations", type="primary", icon=":material/search:", disabled=running):
        return
    slots = find_slots(text, settings.context_sentences)
    if not slots:
        st.warning("No [CITATION] in the text yet: mark each place that needs a reference, then try again.",
                   icon=":material/edit_note:")
        return
    try:
        pipeline = paired_bib.paired_pipeline(settings) or resources.make_pipeline(settings)
    except CitefinderError as e:
        render.error_box(e)
        return
    st.session_state[state.CITE_JOB] = FillJob(
        pipeline, text, source_name=st.session_state.get(state.CITE_SOURCE),
        library_folder=_library_folder(settings), total=len(slots),
    ).start()


def _progress_rows(snap) -> pd.DataFrame:
    rows = [{"slot": r.slot.index + 1 if r.slot else None,
             "status": "found" if r.selection.status == "found" else "not found",
             "paper": r.selection.paper.title if r.selection.paper else "",
             "confidence": confidence_label(r.selection.confidence),
             "seconds": round(tables.total_seconds(r), 2)} for r in snap.results]
    return tables.slot_progress_frame(rows)


def follow_fill() -> None:
    """While a fill runs: a bar and a row per finished slot, redrawn live (never collapsed).

    When it is done (possibly while the user was on another page) its results become the page's run.
    """
    job: FillJob | None = st.session_state.get(state.CITE_JOB)
    if job is None:
        return
    snap = job.snapshot()
    if not snap.finished:
        with st.container(border=True, key="fill_progress"):
            head = st.empty()
            bar = st.empty()
            table = st.empty()
            shown = -1
            while True:
                snap = job.snapshot()
                total = snap.total or 1
                if snap.done != shown or snap.finished:
                    shown = snap.done
                    head.markdown(f"**Filling {snap.total} slots…** {snap.done} done, {snap.elapsed_s:.0f} s"
                                  + ("" if snap.done else " (the first slot also loads the models)"))
                    bar.progress(min(1.0, snap.done / total), text=f"{snap.done} of {snap.total} slots filled")
                    table.dataframe(_progress_rows(snap), hide_index=True, width="stretch")
                if snap.finished:
                    break
                time.sleep(POLL_S)
            found = sum(r.selection.status == "found" for r in snap.results)
            head.markdown(f"**Filled {found} of {snap.total} slots** in {snap.elapsed_s:.1f} s")
            bar.empty()
    st.session_state.pop(state.CITE_JOB, None)
    if not snap.results:
        if snap.error:
            render.error_box(CitefinderError(snap.error))
        return
    st.session_state[state.CITE_RUN] = state.CiteRun(
        text=job.text, results=snap.results, elapsed_s=snap.elapsed_s, source_name=job.source_name,
        total=snap.total, error=snap.error,
    )
    st.session_state[state.CITE_CHOICES] = {}
    st.session_state[state.CITE_EXTRA] = {}
    st.session_state.pop(state.CITE_FOCUS, None)


# --- choices ----------------------------------------------------------------------------------------------------------


def current_choices(run: state.CiteRun) -> dict[int, str | None]:
    """The selector's picks, overridden by the user's."""
    choices = exports.default_choices(run.results)
    choices.update({i: v for i, v in choices_state().items() if i in choices})
    return choices


def _choose(settings: Settings, slot_index: int, doc_id: str | None, paper: Paper | None = None) -> None:
    choices_state()[slot_index] = doc_id
    if paper is not None:
        extra_state()[paper.doc_id] = paper
    save_workspace(settings)


def _accept(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str | None) -> None:
    """Keep the slot's current choice as the user's, then go to the next slot to check."""
    _choose(settings, slot_index, doc_id)
    _next_to_check(run, slot_index)


def _next_to_check(run: state.CiteRun, after: int | None = None) -> None:
    todo = [slot_of(r).index for r in run.results if slot_status(r, current_choices(run)) in (NOT_FOUND_S, UNSURE)]
    later = [i for i in todo if after is None or i > after]
    stay: list[int | None] = [after]
    st.session_state[state.CITE_FOCUS] = (later or todo or stay)[0]
    st.session_state[state.CITE_VIEW] = TABLE


def _confidences(result: SlotResult) -> dict[str, float]:
    trace = result.trace("select")
    return {h.doc_id: h.score for h in trace.top} if trace is not None else {}


USER_PICK, LEFT_EMPTY, NOT_FOUND_S = "your pick", "left empty", "not found"


def slot_status(result: SlotResult, choices: dict[int, str | None]) -> str:
    """In words: your pick, left empty, not found, or the selector's confidence in words."""
    index = slot_of(result).index
    chosen = choices.get(index)
    picked_by_user = index in choices_state()
    if picked_by_user:
        return USER_PICK if chosen is not None else LEFT_EMPTY
    if chosen is None:
        return NOT_FOUND_S
    return confidence_words(result.selection.confidence)


def _matches(status: str, which: str) -> bool:
    if which == NOT_FOUND:
        return status == NOT_FOUND_S
    if which == UNSURE_FILTER:
        return status in (UNSURE, UNLIKELY)
    return True


# --- results ----------------------------------------------------------------------------------------------------------


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
                 on_click=_choose, args=(settings, slot_of(result).index, paper.doc_id, paper))


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
        confidences = _confidences(result)
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
                  on_click=_choose, args=(settings, slot.index, None))
        actions.button("Accept, next", key=f"{run.pick_key(slot.index)}_accept", type="tertiary",
                  icon=":material/done_all:", on_click=_accept, args=(settings, run, slot.index, choice),
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
    controls.button("Next to check", icon=":material/skip_next:", shortcut="n", on_click=_next_to_check,
              args=(run, st.session_state.get(state.CITE_FOCUS)), help="The next slot not found or unsure (key n).")
    positions = dict(zip((slot_of(r).index for r in run.results), positions_in_sentence(run.results), strict=True))
    shown = [r for r in run.results if _matches(slot_status(r, choices), which)]
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
