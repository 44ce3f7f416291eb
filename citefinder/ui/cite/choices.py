"""The user's picks on the Cite page: what is chosen for each slot, choosing and accepting, the next slot to
check, and a slot's status in words.
"""

from __future__ import annotations

import streamlit as st

from citefinder.config import Settings
from citefinder.types import Paper, SlotResult
from citefinder.ui import exports, state
from citefinder.ui.cite.draft import choices_state, extra_state, save_workspace, slot_of
from citefinder.ui.words import UNLIKELY, UNSURE, confidence_words

CARDS, TABLE = "Cards", "Table"
ALL, NOT_FOUND, UNSURE_FILTER = "All", "Not found", "Unsure"
USER_PICK, LEFT_EMPTY, NOT_FOUND_S = "your pick", "left empty", "not found"


def current_choices(run: state.CiteRun) -> dict[int, str | None]:
    """The selector's picks, overridden by the user's."""
    choices = exports.default_choices(run.results)
    choices.update({i: v for i, v in choices_state().items() if i in choices})
    return choices


def choose(settings: Settings, slot_index: int, doc_id: str | None, paper: Paper | None = None) -> None:
    choices_state()[slot_index] = doc_id
    if paper is not None:
        extra_state()[paper.doc_id] = paper
    save_workspace(settings)


def accept(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str | None) -> None:
    """Keep the slot's current choice as the user's, then go to the next slot to check."""
    choose(settings, slot_index, doc_id)
    next_to_check(run, slot_index)


def next_to_check(run: state.CiteRun, after: int | None = None) -> None:
    todo = [slot_of(r).index for r in run.results if slot_status(r, current_choices(run)) in (NOT_FOUND_S, UNSURE)]
    later = [i for i in todo if after is None or i > after]
    stay: list[int | None] = [after]
    st.session_state[state.CITE_FOCUS] = (later or todo or stay)[0]
    st.session_state[state.CITE_VIEW] = TABLE


def shown_confidences(result: SlotResult) -> dict[str, float]:
    trace = result.trace("select")
    return {h.doc_id: h.score for h in trace.top} if trace is not None else {}


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


def matches_filter(status: str, which: str) -> bool:
    if which == NOT_FOUND:
        return status == NOT_FOUND_S
    if which == UNSURE_FILTER:
        return status in (UNSURE, UNLIKELY)
    return True
