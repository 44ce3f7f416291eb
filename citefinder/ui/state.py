"""Per-session state: every ``st.session_state`` key the app uses, named once here.

Settings live in the session (``SETTINGS``), never in a module global: each browser session
may point at its own LLM; they are also saved per user (:mod:`citefinder.ui.user_settings`).
Results live in the session so reruns (opening a trace, changing a pick) only redraw.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st
from pydantic import ValidationError

from citefinder.config import Settings
from citefinder.library.bibcount import BibCount
from citefinder.types import SlotResult
from citefinder.ui import user_settings

SETTINGS = "settings"  # citefinder.config.Settings for this session
SETTINGS_ERROR = "settings_error"  # why the CITEFINDER_* environment could not be used

CITE_TEXT = "cite_text"  # text area with the draft
CITE_UPLOAD = "cite_upload"  # draft uploader widget
CITE_UPLOAD_SEEN = "cite_upload_seen"  # file_id of the upload already copied into the text area
CITE_SOURCE = "cite_source"  # name of the uploaded draft, for download names
CITE_RUN = "cite_run"  # CiteRun of the last "Find citations"
CITE_DRAFT = "cite_draft"  # the draft text, kept while the text area is not on the page (other pages)
CITE_JOB = "cite_job"  # FillJob of a fill in progress (runs on while the user visits other pages)
CITE_CHOICES = "cite_choices"  # {slot index: (doc_id, ...)}: the user's picks over the selector's (ui.picks)
CITE_EXTRA = "cite_extra"  # {doc_id: Paper}: picked papers that are not among the slot's candidates
CITE_CHANGED = "cite_changed"  # {slot index: SetAside}: a pick set aside because its sentence was edited
CITE_HISTORY = "cite_history"  # [Picks]: earlier pick states, the last one first to undo (key u)
CITE_NOTE = "cite_note"  # what the last re-run kept and set aside, in words
CITE_PAIRED = "cite_paired"  # PairedBib the next fill is restricted to (None: the whole library)
CITE_PAIR_ERROR = "cite_pair_error"  # why the last .bib offered for pairing was refused
CITE_ASK = "cite_ask"  # an action waiting for the user's yes: "rerun" or "start_over"
CITE_SCROLL = "cite_scroll"  # the key of the element to bring into view on the next run
CITE_ADDING = "cite_adding"  # key a was pressed: the next 1-5 adds that candidate to the slot
CITE_ORDER = "cite_order"  # order of the downloaded .bib: "cited" or "file"
CITE_RESTORED = "cite_restored"  # the saved draft of this library was looked for (once per session)
CITE_VIEW = "cite_view"  # "Cards" or "Table"
CITE_FILTER = "cite_filter"  # "All", "Not found" or "Unsure"
CITE_FOCUS = "cite_focus"  # slot index shown under the table (jump to slot / next to check)
CITE_DRAFT_ID = "cite_draft_id"  # the identity of the draft this tab holds (its workspace file; picks belong to it)
CITE_LITERATURE = "cite_literature"  # "Off", "When unsure" or "Every slot": search the literature (ui.cite.literature)

SEARCH_QUESTION = "search_question"
SEARCH_RUN = "search_run"  # SearchRun of the last search
SEARCH_SLOT = "search_slot"  # the Cite page's slot a search result is put into

LIBRARY_UPLOAD = "library_upload"
LIBRARY_REPORT = "library_report"  # (ImportReport, list of file names) of the last import
LIBRARY_REVIEW = "library_review"  # ImportReview of the last import: duplicates and what they matched, PDFs' papers
LIBRARY_EDIT = "library_edit"  # doc_id of the paper open for editing
LIBRARY_QUERY = "library_query"
LIBRARY_PAGE = "library_page"
LIBRARY_REMOVE = "library_remove"
LIBRARY_CONFIRM = "library_confirm"
LIBRARY_MESSAGE = "library_message"  # a success line to show after a rerun

LLM_CHECK = "llm_check"  # (ok, message) of the last "Test connection"

_run_ids = itertools.count(1)


def paired_settings(base: Settings, folder: Path) -> Settings:
    """The settings of the library kept for a saved .bib in ``folder`` (``<library>/paired/<hash>``)."""
    return base.model_copy(update={"library": folder / "library", "collection": f"paired-{folder.name}"})


@dataclass(frozen=True)
class PairedBib:
    """A .bib the user paired with the draft (:mod:`citefinder.ui.paired_bib`): kept under the library folder
    in ``folder`` with a library of its own; the results are then restricted to its entries."""

    name: str  # the file's name as the user gave it
    folder: str  # <library>/paired/<hash>
    entries: int  # the papers it holds, counted as its library stores them (library/bibcount.py): what every page says
    read: int = 0  # the entries read from it, when more (the same work under several keys)

    @classmethod
    def from_count(cls, name: str, folder: str, count: BibCount) -> "PairedBib":
        return cls(name, folder, count.papers, count.entries)

    def words(self) -> str:
        """"61 papers", or "61 papers (70 entries: 9 repeat another entry's work)"."""
        return BibCount(self.entries, max(self.entries, self.read)).words()

    def settings(self, base: Settings) -> Settings:
        return paired_settings(base, Path(self.folder))

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "folder": self.folder, "entries": self.entries, "read": self.read}

    @classmethod
    def from_dict(cls, d: dict | None) -> "PairedBib | None":
        try:
            return cls(str(d["name"]), str(d["folder"]), int(d["entries"]), int(d.get("read", 0))) if d else None
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class CiteRun:
    """One "Find citations": the text it ran on and its results."""

    text: str
    results: tuple[SlotResult, ...]
    elapsed_s: float
    source_name: str | None = None
    run_id: int = field(default_factory=lambda: next(_run_ids))

    total: int = 0  # slots in the text (more than ``len(results)`` when a fill stopped early)
    error: str | None = None  # why the fill stopped early
    paired: PairedBib | None = None  # the .bib the results are restricted to (None: the whole library)

    def pick_key(self, slot_index: int) -> str:
        """Widget-key prefix of the slot's choice buttons (new per run)."""
        return f"pick_{self.run_id}_{slot_index}"

    def trace_key(self, slot_index: int) -> str:
        return f"trace_{self.run_id}_{slot_index}"


@dataclass(frozen=True)
class SearchRun:
    question: str
    result: SlotResult
    elapsed_s: float
    run_id: int = field(default_factory=lambda: next(_run_ids))


def get_settings() -> Settings:
    """This session's settings; on first use, from the CITEFINDER_* environment.

    An invalid environment does not crash the app: the defaults are used and the error is kept
    under ``SETTINGS_ERROR`` for the pages to show.
    """
    if SETTINGS not in st.session_state:
        base = environment_settings()
        settings, error = user_settings.load_settings(base)
        if error:
            st.session_state[SETTINGS_ERROR] = error
        st.session_state[SETTINGS] = settings
    return st.session_state[SETTINGS]


def environment_settings() -> Settings:
    """Settings from the CITEFINDER_* environment (the defaults when it is invalid, with the error kept)."""
    try:
        return Settings()
    except ValidationError as e:
        st.session_state[SETTINGS_ERROR] = f"CITEFINDER_* environment ignored: {validation_message(e)}"
        return Settings.model_construct()


def set_settings(settings: Settings) -> None:
    """Use ``settings`` in this session and save them for this user (never the API key)."""
    st.session_state[SETTINGS] = settings
    st.session_state.pop(SETTINGS_ERROR, None)
    try:
        user_settings.save_settings(settings, environment_settings())
    except OSError as e:
        st.session_state[SETTINGS_ERROR] = f"Settings apply to this session only: could not save them ({e})."


def validation_message(error: ValidationError) -> str:
    """pydantic's errors as "field: message" lines a user can act on."""
    lines = []
    for err in error.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "settings"
        lines.append(f"{where}: {err.get('msg', 'invalid value')}")
    return "\n".join(lines)
