"""A .bib (or Better BibTeX CSL-JSON) paired with the draft: the draft is then filled from that file alone, so
the downloaded .tex cites the user's own keys and the downloaded .bib holds their own entries.

An upload is checked like a Library-page import (:func:`citefinder.library.readers.read_papers`): an empty,
binary or unreadable file is refused on the spot with the same message, and nothing is kept. A good one is
saved under the library folder (``paired/<hash>/``) with a library of its own beside it, linked to the saved
file (:mod:`citefinder.library.link`): the same upload is imported once, a changed one gets a new folder.
The pairing (:class:`~citefinder.ui.state.PairedBib`) lives in the session and in the saved draft, so it
survives a reload; only *Unpair* ends it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
from pathlib import Path

import streamlit as st

from citefinder.config import Settings
from citefinder.library.bibcount import BibCount, count_read
from citefinder.library.link import link_file, linked_files, sync_all, unread_entries
from citefinder.library.readers import read_papers
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline
from citefinder.text.safewrite import atomic_write
from citefinder.types import ImportFailure, Paper
from citefinder.ui import enrich_view, resources, state
from citefinder.ui.markdown import as_sentence, escape_markdown, message_markdown

log = logging.getLogger(__name__)

UPLOAD = "cite_bib_upload"  # the .bib uploader widget
SEEN = "cite_bib_seen"  # file_id of the upload already checked
UNREAD = "cite_bib_unread"  # (paired folder, the entries of the paired file that could not be read, named)
COMMAND = "cite_command"  # the command picked for plain [CITATION] markers
COMMANDS = ["\\cite", "\\citep", "\\citet", "\\autocite", "\\parencite", "\\textcite", "\\footcite"]


def check_bib(name: str, data: bytes) -> tuple[int, str | None]:
    """How many papers ``data`` (a file called ``name``) holds, counted as every page counts them
    (:mod:`citefinder.library.bibcount`), and why it cannot be used (None when it can): the Library page's
    reasons, naming the file as the user named it."""
    count, problem, _ = read_bib_upload(name, data)
    return count.papers, problem


def read_bib_upload(name: str, data: bytes) -> tuple[BibCount, str | None, str]:
    """:func:`check_bib`'s count and reason, and the entries that could not be read, named as the Library page's
    import names them ("1 entry could not be read (refs.bib:12: malformed BibTeX entry 'x' at line 12: ...)";
    "" when none)."""
    none = BibCount(0, 0)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name) or "refs.bib"
    if not safe.lower().endswith((".bib", ".json")):
        return none, f"{name}: pair a BibTeX (.bib) or CSL-JSON (.json) file.", ""
    with tempfile.TemporaryDirectory(prefix="citefinder-pair-") as tmp:
        path = Path(tmp) / safe
        atomic_write(path, data)
        items = list(read_papers(path))
    failures = [p for p in items if isinstance(p, ImportFailure)]
    if any(isinstance(p, Paper) for p in items):
        return count_read(items), None, unread_entries(failures, rename=(safe, name))
    reason = failures[0].reason if failures else f"no entries found in {name}"
    return none, reason.replace(safe, name), ""


def _uploaded(settings: Settings) -> None:
    """On a new upload: check it, then pair it (saved under the library folder) or say why not."""
    upload = st.session_state.get(UPLOAD)
    if upload is None:  # the refused file was taken away: its error goes with it
        st.session_state.pop(state.CITE_PAIR_ERROR, None)
        return
    if st.session_state.get(SEEN) == upload.file_id:
        return
    st.session_state[SEEN] = upload.file_id
    data = upload.getvalue()
    count, problem, unread = read_bib_upload(upload.name, data)
    if problem:
        st.session_state[state.CITE_PAIR_ERROR] = f"{as_sentence(problem)} The draft is not paired with it."
        return
    saved = save_bib(settings, upload.name, data)
    st.session_state[state.CITE_PAIRED] = state.PairedBib.from_count(upload.name, str(saved.parent), count)
    st.session_state.pop(state.CITE_PAIR_ERROR, None)
    if unread:
        st.session_state[UNREAD] = (str(saved.parent), f"{as_sentence(unread)} It is left out: fix it in your "
                                                       f"{upload.name} and pair the file again.")
    else:
        st.session_state.pop(UNREAD, None)


def unpair() -> None:
    st.session_state[state.CITE_PAIRED] = None
    st.session_state.pop(SEEN, None)


def bib_uploader(settings: Settings) -> None:
    """The uploader, what the draft is paired with (and *Unpair*), or why the last file was refused."""
    st.file_uploader(
        "Pair with your .bib (optional)", type=["bib", "json"], key=UPLOAD, on_change=_uploaded, args=(settings,),
        help="Your bibliography (.bib, or CSL-JSON from Better BibTeX). The draft is then filled from its "
             "entries only, with your own keys, so the filled .tex compiles against it.",
    )
    _uploaded(settings)  # an upload AppTest or a restored session made without the callback
    error = st.session_state.get(state.CITE_PAIR_ERROR)
    if error:
        st.error(message_markdown(error), icon=":material/error:")
    paired: state.PairedBib | None = st.session_state.get(state.CITE_PAIRED)
    if paired is not None:
        row = st.container(horizontal=True, vertical_alignment="center")
        row.caption(f"Paired with **{escape_markdown(paired.name)}** ({paired.words()}): suggestions "
                    "come from it alone.")
        row.button("Unpair", type="tertiary", icon=":material/link_off:", on_click=unpair, key="cite_unpair",
                   help="Fill from the whole library again (your picks stay).")
        unread = st.session_state.get(UNREAD)
        if unread and unread[0] == paired.folder:
            st.warning(escape_markdown(unread[1]), icon=":material/warning:")
        own = paired.settings(settings)
        enrich_view.enrich_button(settings, lambda: paired_library(own, paired), own.library, key="cite_enrich",
                                  container=row)


def paired_pipeline(settings: Settings, paired: state.PairedBib | None) -> Pipeline | None:
    """A pipeline over the paired bibliography's own library (imported on first use), or None."""
    if paired is None:
        return None
    own = paired.settings(settings)
    saved = next(Path(paired.folder).glob("refs.*"), None)
    if saved is None:
        st.session_state[state.CITE_PAIRED] = None
        raise FileNotFoundError(f"the saved copy of {paired.name} is gone; pair the file again")
    return bib_pipeline(settings, own, saved, paired.name)


def paired_library(own: Settings, paired: state.PairedBib) -> Library:
    """The paired .bib's own library, linked to its saved copy and synced."""
    saved = next(Path(paired.folder).glob("refs.*"), None)
    if saved is None:
        raise FileNotFoundError(f"the saved copy of {paired.name} is gone; pair the file again")
    return bib_library(own, saved, paired.name)


NAME_FILE = "name.txt"


def save_bib(settings: Settings, name: str, data: bytes) -> Path:
    """Keep an uploaded .bib (or CSL-JSON) under the library folder, one folder per content
    (``<library>/paired/<hash>/refs.bib``): the same upload is imported once, a changed one gets a new folder."""
    folder = Path(settings.library) / "paired" / hashlib.sha256(data).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    saved = folder / ("refs.json" if name.lower().endswith(".json") else "refs.bib")
    if not saved.exists():
        atomic_write(saved, data)  # the safe writer: whole or not at all
    named = folder / NAME_FILE  # the name the user gave it, for the Library page's list (ui/paired_view.py)
    if not named.exists():
        atomic_write(named, name.encode("utf-8"))
    return saved


def bib_pipeline(settings: Settings, own: Settings, saved: Path, name: str) -> Pipeline:
    """A pipeline over the library of a saved .bib (``own``: its settings, :func:`state.paired_settings`),
    linked on first use and synced after; entries that could not be read are said."""
    library = bib_library(own, saved, name)
    enrich_view.enrich_before_fill(settings, library)
    return Pipeline(own, library, reranker=resources.get_reranker(settings))


def bib_library(own: Settings, saved: Path, name: str) -> Library:
    """The library of a saved .bib, linked on first use and synced after; entries that could not be read are
    said."""
    library = resources.get_library(own)
    with st.spinner(f"Reading your {name}..."):
        reports = [link_file(library, saved)] if saved.resolve() not in linked_files(library) else sync_all(library)
    for report in reports:
        if report.failures:
            st.warning(escape_markdown(f"Of your {name}, {unread_entries(report.failures, rename=(saved.name, name))}"
                                       "; the others are used."))
    return library


def run_library(run: state.CiteRun, default: Library) -> Library:
    """The library a run searched: the paired one, else ``default``."""
    return resources.get_library(run.paired.settings(default.settings)) if run.paired is not None else default
