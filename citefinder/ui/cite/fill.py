"""The Cite page's fill: a worker thread (:mod:`citefinder.ui.fill_job`) that goes on while the user is on
another page, followed with live progress and a per-slot table. A re-run keeps every pick whose sentence is
unchanged and asks first when a pick would not carry over as it is.
"""

from __future__ import annotations

import time
from dataclasses import replace

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.text.slots import find_slots
from citefinder.ui import exports, paired_bib, picks, render, resources, state, tables
from citefinder.ui.cite import literature
from citefinder.ui.cite.draft import (
    ask,
    changed_state,
    choices_state,
    current_draft,
    draft_id,
    extra_state,
    history_state,
    library_folder,
)
from citefinder.ui.fill_job import FillJob, Kept
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.words import confidence_label

POLL_S = 0.25


def _kept(settings: Settings) -> Kept:
    """The user's picks of the last run (and the papers behind them), to move onto the new run's slots."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    if run is None:
        return Kept()
    old_slots = tuple(find_slots(run.text, settings.context_sentences))
    chosen = choices_state()
    ids = {i for v in chosen.values() for i in v} | {i for a in changed_state().values() for i in a.ids}
    extra = dict(extra_state())
    for doc_id in ids - set(extra):
        paper = exports.paper_of(run.results, doc_id)
        if paper is not None:
            extra[doc_id] = paper
    return Kept(old_slots, dict(chosen), dict(changed_state()), extra, tuple(history_state()))


def _start(settings: Settings, text: str) -> None:
    st.session_state.pop(state.CITE_ASK, None)
    slots = find_slots(text, settings.context_sentences)
    paired = st.session_state.get(state.CITE_PAIRED)
    try:
        pipeline = paired_bib.paired_pipeline(settings, paired) or resources.make_pipeline(settings)
        pipeline = literature.with_literature(settings, pipeline)
    except (CitefinderError, OSError) as e:
        render.error_box(e)
        return
    kept = replace(_kept(settings), paired=paired.to_dict() if paired is not None else None)
    st.session_state[state.CITE_JOB] = FillJob(
        pipeline, text, source_name=st.session_state.get(state.CITE_SOURCE),
        library_folder=library_folder(settings), total=len(slots), kept=kept, draft_id=draft_id(),
    ).start()
    st.session_state[state.CITE_SCROLL] = "fill_progress"


def find_button(settings: Settings, text: str) -> None:
    """*Find citations*: always enabled, so the first click right after pasting works. Before a re-run that
    would set picks aside (their sentences changed), it says how many are kept and asks."""
    job: FillJob | None = st.session_state.get(state.CITE_JOB)
    running = job is not None and not job.snapshot().finished
    clicked = st.button("Find citations", type="primary", icon=":material/search:", disabled=running)
    if st.session_state.get(state.CITE_ASK) == "rerun":
        _confirm_rerun(settings, text)
    if not clicked:
        return
    if not find_slots(text, settings.context_sentences):
        st.warning("No [CITATION] in the text yet: mark each place that needs a reference, then try again.",
                   icon=":material/edit_note:")
        return
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    if run is not None and choices_state():
        carry = picks.carry_over(find_slots(run.text, settings.context_sentences), choices_state(),
                                 find_slots(text, settings.context_sentences))
        if carry.changed or carry.dropped:
            ask("rerun")
            st.rerun()
    _start(settings, text)


def _confirm_rerun(settings: Settings, text: str) -> None:
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    if run is None:
        ask(None)
        return
    _rerun_dialog(settings, text)


@st.dialog("Find citations again?", dismissible=False)
def _rerun_dialog(settings: Settings, text: str) -> None:
    """The question opens where the user clicked (a dialog over the page), naming the draft it is about."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    if run is None:
        return
    carry = picks.carry_over(find_slots(run.text, settings.context_sentences), choices_state(),
                             find_slots(text, settings.context_sentences))
    with st.container(border=True, key="cite_confirm_rerun"):
        st.markdown(f"Draft: **{escape_markdown(current_draft().title)}**")
        st.warning(escape_markdown(f"Find citations again? {carry.summary()} Nothing else is lost: a pick set "
                                   "aside can be used again with one click."), icon=":material/published_with_changes:")
        row = st.container(horizontal=True)
        if row.button("Yes, find them again", type="primary", key="cite_rerun_yes"):
            _start(settings, text)
            st.rerun()
        if row.button("Cancel", key="cite_rerun_no"):
            ask(None)
            st.rerun()


def _progress_rows(snap) -> pd.DataFrame:
    rows = [{"slot": r.slot.index + 1 if r.slot else None,
             "status": "found" if r.selection.status == "found" else "not found",
             "paper": " + ".join(p.title for p in r.selection.papers),
             "confidence": confidence_label(r.selection.confidence),
             "seconds": round(tables.total_seconds(r), 2)} for r in snap.results]
    return tables.slot_progress_frame(rows)


def follow_fill() -> None:
    """While a fill runs: a bar and a row per finished slot, redrawn live (never collapsed).

    When it is done (possibly while the user was on another page) its results become the page's run, with
    the user's picks moved onto its slots (kept, or set aside beside a changed slot) and a line saying so.
    """
    job: FillJob | None = st.session_state.get(state.CITE_JOB)
    if job is None:
        return
    snap = job.snapshot()
    if not snap.finished:
        with st.container(border=True, key="fill_progress"):
            render.scroll_into_view(st.session_state.pop(state.CITE_SCROLL, None))
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
            head.markdown(f"**Auto-filled {found} of {snap.total} slots** in {snap.elapsed_s:.1f} s")
            bar.empty()
    st.session_state.pop(state.CITE_JOB, None)
    if job.draft_id and job.draft_id != st.session_state.get(state.CITE_DRAFT_ID):
        return  # another draft is open in this tab now: the results were saved with their own draft
    if not snap.results:
        if snap.error:
            render.error_box(CitefinderError(snap.error))
        return
    st.session_state[state.CITE_RUN] = state.CiteRun(
        text=job.text, results=snap.results, elapsed_s=snap.elapsed_s, source_name=job.source_name,
        total=snap.total, error=snap.error, paired=state.PairedBib.from_dict(job.kept.paired),
    )
    carry = job.carry
    st.session_state[state.CITE_CHOICES] = dict(carry.picks)
    st.session_state[state.CITE_CHANGED] = dict(carry.changed)
    st.session_state[state.CITE_EXTRA] = dict(job.kept.extra)
    st.session_state[state.CITE_HISTORY] = list(job.kept.history)
    st.session_state[state.CITE_NOTE] = carry.summary() if job.kept.slots and (
        job.kept.picks or job.kept.aside) else None
    st.session_state.pop(state.CITE_FOCUS, None)
    st.session_state[state.CITE_SCROLL] = "cite_results"

