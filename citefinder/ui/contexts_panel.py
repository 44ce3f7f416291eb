"""Library page piece: the citation-context memory (how the literature, and you, cite the library's papers).

Call :func:`contexts_panel` from the page. It shows what the memory holds, imports a context pack
(.jsonl, .jsonl.gz; schema in the README) or a LaTeX project (.zip, or a .tex with its .bib), and
forgets the pairs learned from the user's picks. The work is :mod:`citefinder.library.contexts.api`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.errors import CitefinderError
from citefinder.ui import resources
from citefinder.ui.markdown import escape_markdown
from citefinder.ui.render import error_box

CONTEXTS_UPLOAD = "contexts_upload"
CONTEXTS_REPORT = "contexts_report"  # the last import's ContextImportReport (this session)
PACK_TYPES = ("jsonl", "gz", "zip", "tex", "bib")


def memory_summary(counts: dict[str, int]) -> str:
    """One line on what the memory holds."""
    if not counts.get("contexts"):
        return ("No citation contexts yet. Import a context pack or your own LaTeX projects: the agents cited-as, "
                "cited-like, co-cited and cited-often then read how your papers are cited.")
    learned = counts.get("contexts_user", 0)
    return (f"{counts['contexts']:,} citation contexts held; {counts['contexts_matched']:,} of them cite "
            f"{counts['papers_cited']:,} papers of this library" + (f"; {learned:,} learned from your picks." if learned
                                                                     else "."))


@contextmanager
def _saved(files: list[Any]) -> Iterator[list[Path]]:
    """The uploaded files in a temporary folder, removed once the import is over (also when it fails)."""
    with tempfile.TemporaryDirectory(prefix="citefinder-contexts-") as tmp:
        paths = []
        for f in files:
            path = Path(tmp) / Path(f.name).name
            path.write_bytes(f.getvalue())
            paths.append(path)
        yield paths


def import_uploads(library: Any, paths: list[Path], split: str) -> list[Any]:
    """Import uploaded packs and LaTeX projects (a .zip, or .tex files with the uploaded .bib files)."""
    from citefinder.index.base import derived_indexes
    from citefinder.library.contexts import api
    from citefinder.library.contexts.records import parse_filters, read_pack
    from citefinder.retrieve.registry import index_kinds
    from citefinder.train.contexts import latex_records

    filters = parse_filters([f"split={split}"] if split != "all" else [])
    packs = [p for p in paths if p.name.lower().endswith((".jsonl", ".jsonl.gz"))]
    bibs = [p for p in paths if p.suffix.lower() == ".bib"]
    projects = [p for p in paths if p.suffix.lower() in (".zip", ".tex")]
    reports = [api.import_contexts(library, read_pack(p, filters), pack=p.name) for p in packs]
    if projects:
        reports.append(api.import_contexts(library, latex_records(projects, bibs), pack="latex"))
    derived_indexes(library).rebuild(index_kinds(library.settings, library), library)
    return reports


def contexts_panel(settings: Settings) -> None:
    """What the memory holds, an import form, and a button forgetting the learned picks."""
    from citefinder.library.contexts import api

    st.subheader("Citation contexts")
    st.caption("Sentences that cite your papers, from context packs (JSONL, schema in the README), your own LaTeX "
               "projects and your picks. Records are matched to your papers by DOI, arXiv id or title; the others are "
               "kept for papers you import later.")
    try:
        library = resources.get_library(settings)
        counts = api.memory_counts(library)
    except CitefinderError as e:
        error_box(e)
        return
    st.markdown(escape_markdown(memory_summary(counts)))
    with st.form("contexts-import"):
        files = st.file_uploader("A context pack (.jsonl, .jsonl.gz) or a LaTeX project (.zip, or .tex with its .bib)",
                                 type=list(PACK_TYPES), accept_multiple_files=True, key=CONTEXTS_UPLOAD)
        split = st.selectbox("Pack records to keep", ["all", "train", "test"],
                             help="a pack's 'split' field: keep one part to keep a measurement honest")
        go = st.form_submit_button("Import contexts", type="primary")
    if go:
        if not files:
            st.error("Choose a pack or a LaTeX project to import.")
        else:
            with st.status("Importing citation contexts...", expanded=False) as box:
                try:
                    with _saved(list(files)) as paths:
                        reports = import_uploads(library, paths, split)
                except CitefinderError as e:
                    box.update(label="Import failed", state="error")
                    error_box(e)
                    return
                box.update(label="Imported", state="complete")
            st.session_state[CONTEXTS_REPORT] = reports
            st.rerun()
    for report in st.session_state.get(CONTEXTS_REPORT) or []:
        st.success(escape_markdown(report.summary()), icon=":material/check_circle:")
        for failure in report.failures[:10]:
            st.caption(escape_markdown(f"skipped: {failure.source}: {failure.reason}"))
    if counts.get("contexts_user") and st.button("Forget the contexts learned from my picks"):
        n = api.forget(library, ["user"])
        st.session_state[CONTEXTS_REPORT] = []
        st.toast(f"Forgot {n} learned contexts")
        st.rerun()
