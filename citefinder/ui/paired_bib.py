"""A .bib (or Better BibTeX CSL-JSON) uploaded with a LaTeX draft: the draft is then filled from
that file alone, so the downloaded .tex cites the user's own keys.

The upload is saved under the library folder (``paired/<hash>/``) with a library of its own
beside it, linked to the saved file (:mod:`citefinder.library.link`): the same upload is
imported once, and a changed upload gets a new folder.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import streamlit as st

from citefinder.config import Settings
from citefinder.library.link import link_file, linked_files, sync_all
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline
from citefinder.ui import resources

log = logging.getLogger(__name__)

UPLOAD = "cite_bib_upload"  # the .bib uploader widget
RUN_LIBRARY = "cite_paired_library"  # settings of the paired library the last run used (None: the main one)
COMMAND = "cite_command"  # the command picked for plain [CITATION] markers
COMMANDS = ["\\cite", "\\citep", "\\citet", "\\autocite", "\\parencite", "\\textcite", "\\footcite"]


def bib_uploader() -> None:
    st.file_uploader(
        "Pair with your .bib (optional)", type=["bib", "json"], key=UPLOAD,
        help="Your bibliography (.bib, or CSL-JSON from Better BibTeX). The draft is then filled from its "
             "entries only, with your own keys, so the filled .tex compiles against it.",
    )


def paired_settings(settings: Settings) -> Settings | None:
    """Settings whose library holds the uploaded bibliography (saved under the library folder), or None."""
    upload = st.session_state.get(UPLOAD)
    if upload is None:
        return None
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()[:16]
    folder = Path(settings.library) / "paired" / digest
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".json" if upload.name.lower().endswith(".json") else ".bib"
    saved = folder / f"refs{suffix}"
    if not saved.exists():
        saved.write_bytes(data)
    return settings.model_copy(update={"library": folder / "library", "collection": f"paired-{digest}"})


def paired_pipeline(settings: Settings) -> Pipeline | None:
    """A pipeline over the uploaded bibliography's own library (imported on first use), or None."""
    paired = paired_settings(settings)
    st.session_state[RUN_LIBRARY] = paired
    if paired is None:
        return None
    library = resources.get_library(paired)
    saved = next(Path(paired.library).parent.glob("refs.*"))
    with st.spinner(f"Reading your {st.session_state[UPLOAD].name}..."):
        reports = [link_file(library, saved)] if saved.resolve() not in linked_files(library) else sync_all(library)
    for report in reports:
        if report.failures:
            st.warning(f"{len(report.failures)} entries of your file could not be read; the others are used.")
    return Pipeline(paired, library, reranker=resources.get_reranker(settings))


def run_library(default: Library) -> Library:
    """The library the last run searched: the paired one, else ``default``."""
    paired = st.session_state.get(RUN_LIBRARY)
    return resources.get_library(paired) if paired is not None else default
