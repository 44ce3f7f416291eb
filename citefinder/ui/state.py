"""Per-session state: every ``st.session_state`` key the app uses, named once here.

Settings live in the session (``SETTINGS``), never in a module global: each browser session
may point at its own LLM. Results live in the session so reruns (opening a trace, changing a
pick) only redraw.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import streamlit as st
from pydantic import ValidationError

from citefinder.config import Settings
from citefinder.types import SlotResult

SETTINGS = "settings"  # citefinder.config.Settings for this session
SETTINGS_ERROR = "settings_error"  # why the CITEFINDER_* environment could not be used

CITE_TEXT = "cite_text"  # text area with the draft
CITE_UPLOAD = "cite_upload"  # draft uploader widget
CITE_UPLOAD_SEEN = "cite_upload_seen"  # file_id of the upload already copied into the text area
CITE_SOURCE = "cite_source"  # name of the uploaded draft, for download names
CITE_RUN = "cite_run"  # CiteRun of the last "Find citations"

SEARCH_QUESTION = "search_question"
SEARCH_RUN = "search_run"  # SearchRun of the last search

LIBRARY_UPLOAD = "library_upload"
LIBRARY_REPORT = "library_report"  # (ImportReport, list of file names) of the last import
LIBRARY_QUERY = "library_query"
LIBRARY_PAGE = "library_page"
LIBRARY_REMOVE = "library_remove"
LIBRARY_CONFIRM = "library_confirm"
LIBRARY_MESSAGE = "library_message"  # a success line to show after a rerun

LLM_CHECK = "llm_check"  # (ok, message) of the last "Test connection"

_run_ids = itertools.count(1)


@dataclass(frozen=True)
class CiteRun:
    """One "Find citations": the text it ran on and its results."""

    text: str
    results: tuple[SlotResult, ...]
    elapsed_s: float
    source_name: str | None = None
    run_id: int = field(default_factory=lambda: next(_run_ids))

    def pick_key(self, slot_index: int) -> str:
        """Widget key of the slot's "cite as" selectbox (new per run, so picks reset)."""
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
        try:
            st.session_state[SETTINGS] = Settings()
        except ValidationError as e:
            st.session_state[SETTINGS_ERROR] = f"CITEFINDER_* environment ignored: {validation_message(e)}"
            st.session_state[SETTINGS] = Settings.model_construct()
    return st.session_state[SETTINGS]


def set_settings(settings: Settings) -> None:
    st.session_state[SETTINGS] = settings
    st.session_state.pop(SETTINGS_ERROR, None)


def validation_message(error: ValidationError) -> str:
    """pydantic's errors as "field: message" lines a user can act on."""
    lines = []
    for err in error.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "settings"
        lines.append(f"{where}: {err.get('msg', 'invalid value')}")
    return "\n".join(lines)
