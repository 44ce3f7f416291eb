"""The Cite page's fill: a worker thread (:mod:`citefinder.ui.fill_job`) that goes on while the user is on
another page, followed with live progress and a per-slot table.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.text.slots import find_slots
from citefinder.ui import paired_bib, render, resources, state, tables
from citefinder.ui.cite.draft import library_folder
from citefinder.ui.fill_job import FillJob
from citefinder.ui.words import confidence_label

POLL_S = 0.25


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
        library_folder=library_folder(settings), total=len(slots),
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
