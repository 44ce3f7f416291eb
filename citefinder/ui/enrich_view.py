"""Completing the user's entries from the configured literature library (the setting ``literature``): the
*Complete from ...* button under an import summary and beside a paired .bib, and the enrichment of a paired .bib
before each fill with its one line ("12 of your 43 entries gained an abstract from papers-333k").
:mod:`citefinder.sources.enrich` does the work; the user's .bib entries are never changed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.library.store import Library
from citefinder.sources.enrich import EnrichReport, enrich
from citefinder.sources.registry import open_source, what_is_sent
from citefinder.ui import render
from citefinder.ui.markdown import escape_markdown

log = logging.getLogger(__name__)

LINES = "enrich_lines"  # library folder -> the last enrichment's line, shown beside that library's .bib
SHOWN_AMBIGUOUS = 20


def source_name(settings: Settings) -> str:
    """How the configured literature library is named on the page ("" when none is set)."""
    from citefinder.errors import SourceError
    from citefinder.sources.registry import resolve

    spec = settings.literature.strip()
    try:
        return resolve(spec).label if spec else ""
    except SourceError:  # a name both a folder and a service: opening it says so
        return spec


def run_enrich(settings: Settings, library: Library) -> EnrichReport | None:
    """Enrich ``library`` from the configured literature library with a progress bar; None (and the reason on
    the page) when it cannot be read."""
    try:
        source = open_source(settings.literature, settings)
    except CitefinderError as e:
        render.error_box(e)
        return None
    bar = st.progress(0.0, text=f"Looking your entries up in {escape_markdown(source.name)}...")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / max(1, total)),
                     text=f"{done:,} of {total:,} entries looked up in {escape_markdown(source.name)} · "
                          f"{max(0, total - done):,} left")

    try:
        report = enrich(library, source, progress=progress)
    except CitefinderError as e:
        render.error_box(e)
        return None
    finally:
        bar.empty()
    st.session_state.setdefault(LINES, {})[str(library.path)] = line(report, library)
    return report


def line(report: EnrichReport, library: Library) -> str:
    """The one line a fill shows: how many entries have an abstract from the source (this run's and earlier
    runs' enrichments), what this run added, what was left alone."""
    total = library.count()
    found = sum(any(f == "abstract" and src == report.source for f, src, _ in p.provenance)
                for p in library.iter_papers())
    parts = [f"{found:,} of your {total:,} entries gained an abstract from {report.source}"]
    ids = sum(bool(set(o.gained) - {"abstract"}) for o in report.outcomes)
    if ids:
        parts.append(f"{ids:,} an identifier")
    if ambiguous := report.of("ambiguous"):
        parts.append(f"{len(ambiguous):,} ambiguous title{'s' if len(ambiguous) != 1 else ''} left alone")
    return "; ".join(parts) + ". Your .bib is unchanged."


def enrich_button(settings: Settings, open_library: Callable[[], Library], folder: Path | str, *, key: str,
                  container: Any = None) -> None:
    """*Complete from <literature>* (in ``container``, else the page): enrich the library ``open_library()`` opens
    (kept in ``folder``), then say its line and every ambiguous title. Nothing when no literature library is
    configured."""
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
        report = run_enrich(settings, library)
        if report is not None:
            _ambiguous(report)
    paired_line(folder)


def enrich_before_fill(settings: Settings, library: Library) -> None:
    """A paired .bib's library completed from the configured literature library before a fill (a no-op without
    one; re-running adds nothing new, so only the lookups are repeated)."""
    if not source_name(settings) or library.read_only:
        return
    with st.spinner(f"Completing your entries from {escape_markdown(source_name(settings))}..."):
        report = run_enrich(settings, library)
    if report is not None:
        paired_line(library.path)  # here now; beside the pairing on the next runs of the page


def paired_line(folder: Path | str) -> None:
    """The last enrichment's line for the library kept in ``folder`` (a paired .bib's, the open one)."""
    shown = st.session_state.get(LINES, {}).get(str(folder))
    if shown:
        st.caption(escape_markdown(shown))


def _ambiguous(report: EnrichReport) -> None:
    ambiguous = report.of("ambiguous")
    if not ambiguous:
        return
    with st.expander(f"Titles left alone ({len(ambiguous)}): two works share them", icon=":material/call_split:"):
        st.markdown("\n".join(f"- {escape_markdown(o.line())}" for o in ambiguous[:SHOWN_AMBIGUOUS])
                    + (f"\n\n…and {len(ambiguous) - SHOWN_AMBIGUOUS} more." if len(ambiguous) > SHOWN_AMBIGUOUS
                       else ""))
