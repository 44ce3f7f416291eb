"""Completing the user's entries from the configured literature library (the setting ``literature``): the
*Complete from ...* button under an import summary and beside a paired .bib, and the enrichment of a paired .bib
before each fill with its one line ("12 of your 43 entries gained an abstract from papers-333k"), and after a
*Complete* the entries that were not found and the ambiguous ones left alone. :mod:`citefinder.workflow.enrich`
does the work; the user's .bib entries are never changed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.store import Library
from citefinder.sources.enrich import Outcome
from citefinder.sources.registry import what_is_sent
from citefinder.ui import render
from citefinder.ui.markdown import escape_markdown
from citefinder.workflow.enrich import Completion, complete, open_from

log = logging.getLogger(__name__)

LINES = "enrich_lines"  # library folder -> the last enrichment's line, shown beside that library's .bib
RESULTS = "enrich_results"  # library folder -> the last Complete's Completion (its lists stay on the page)
SHOWN = 20  # entries listed per group (not found, left alone)


def source_name(settings: Settings) -> str:
    """How the configured literature library is named on the page ("" when none is set)."""
    from citefinder.errors import SourceError
    from citefinder.sources.registry import resolve

    spec = settings.literature.strip()
    try:
        return resolve(spec).label if spec else ""
    except SourceError:  # a name both a folder and a service: opening it says so
        return spec


def run_enrich(settings: Settings, library: Library) -> Completion | None:
    """Complete ``library`` from the configured literature library with a progress bar; None (and the reason on
    the page) when it cannot be read."""
    try:
        source = open_from(settings.literature, settings, library)
    except CitefinderError as e:
        render.error_box(e)
        return None
    bar = st.progress(0.0, text=f"Looking your entries up in {escape_markdown(source.name)}...")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / max(1, total)),
                     text=f"{done:,} of {total:,} entries looked up in {escape_markdown(source.name)} · "
                          f"{max(0, total - done):,} left")

    try:
        done = complete(library, source, progress=progress)
    except CitefinderError as e:
        render.error_box(e)
        return None
    finally:
        bar.empty()
    st.session_state.setdefault(LINES, {})[str(library.path)] = done.line(library)
    st.session_state.setdefault(RESULTS, {})[str(library.path)] = done
    return done


def enrich_button(settings: Settings, open_library: Callable[[], Library], folder: Path | str, *, key: str,
                  container: Any = None) -> None:
    """*Complete from <literature>* (in ``container``, else the page): enrich the library ``open_library()`` opens
    (kept in ``folder``), then say its line, the entries not found and the ambiguous ones left alone (those of
    the last enrichment of that library, a fill's too). Nothing when no literature library is configured."""
    name = source_name(settings)
    if not name:
        return
    where = container if container is not None else st
    if where.button(f"Complete from {name}", key=key, icon=":material/library_add:", type="tertiary",
                    help="Find each entry without an abstract, DOI or arXiv id in the literature library (setting "
                         "'literature') and store what it holds, marked with where it came from. Your .bib entries "
                         "are never changed; titles two works share are left alone. " + what_is_sent(settings)):
        try:
            library = open_library()
        except (CitefinderError, OSError) as e:
            render.error_box(e)
            return
        run_enrich(settings, library)
    paired_line(folder)
    if (shown := st.session_state.get(RESULTS, {}).get(str(folder))) is not None:
        left_out(shown)


def enrich_before_fill(settings: Settings, library: Library) -> None:
    """A paired .bib's library completed from the configured literature library before a fill (a no-op without
    one; re-running adds nothing new, so only the lookups are repeated)."""
    if not source_name(settings) or library.read_only:
        return
    with st.spinner(f"Completing your entries from {escape_markdown(source_name(settings))}..."):
        done = run_enrich(settings, library)
    if done is not None:
        paired_line(library.path)  # here now; beside the pairing on the next runs of the page


def paired_line(folder: Path | str) -> None:
    """The last enrichment's line for the library kept in ``folder`` (a paired .bib's, the open one)."""
    shown = st.session_state.get(LINES, {}).get(str(folder))
    if shown:
        st.caption(escape_markdown(shown))


def left_out(done: Completion) -> None:
    """The entries a *Complete* did not complete, each group in an expander: those the source does not hold, and
    the ambiguous ones left alone with the works they could be and why."""
    groups = [(done.ambiguous, f"Left alone ({len(done.ambiguous)}): ambiguous, their title alone does not say "
                               "which work", ":material/call_split:"),
              (done.not_found, f"Not found in {done.source} ({len(done.not_found)})", ":material/search_off:")]
    for outcomes, label, icon in groups:
        if outcomes:
            with st.expander(escape_markdown(label), icon=icon):
                st.markdown(_listed(outcomes))


def _listed(outcomes: list[Outcome]) -> str:
    more = len(outcomes) - SHOWN
    return "\n".join(f"- {escape_markdown(o.line())}" for o in outcomes[:SHOWN]) + (
        f"\n\n…and {more} more." if more > 0 else "")
