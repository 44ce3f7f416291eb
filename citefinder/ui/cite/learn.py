"""Learning from the user's picks on the Cite page: when a change of the picks cites a paper for a slot as the
user's own (*Use this*, *Add*, keys 1-5 and a, *Accept, next*, *Use it again*), the (slot sentence, paper)
pair joins the memory of the library the run searched (:func:`citefinder.library.contexts.api.learn_picks`),
so the next similar sentence finds it; a pick the user removes is forgotten in this draft alone. Switched off
by the setting ``learn_from_picks`` (Settings page); the learned pairs are forgotten on the Library page.
Best-effort: the pick is saved before, and a failure only shows a small warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from citefinder.config import Settings
from citefinder.types import SlotResult
from citefinder.ui import paired_bib, picks, resources, state
from citefinder.ui.markdown import escape_markdown

log = logging.getLogger(__name__)


def learn_change(settings: Settings, before: Mapping[int, Sequence[str]], after: Mapping[int, Sequence[str]]) -> int:
    """Learn what the change from ``before`` to ``after`` (the user's picks) teaches; returns how many pairs
    were new (0 when learning is off, nothing was picked, or learning failed)."""
    run: state.CiteRun | None = st.session_state.get(state.CITE_RUN)
    settings = st.session_state.get(state.SETTINGS) or settings  # the session's now, not the button's when drawn
    if run is None or not settings.learn_from_picks:
        return 0
    try:
        library = paired_bib.run_library(run, resources.get_library(settings))
        return teach(library, run.results, picks.draft_name(run.source_name, run.text), before, after, settings)
    except Exception as e:  # noqa: BLE001 - learning is a bonus: the pick stands, the traceback goes to the log
        log.warning("could not learn a change of the picks: %s", e, exc_info=True)
        st.toast(f"Your pick is kept, but it could not be learned for next time: {escape_markdown(str(e))[:200]}",
                 icon=":material/warning:")
        return 0


def teach(library: Any, results: Sequence[SlotResult], draft: str, before: Mapping[int, Sequence[str]],
          after: Mapping[int, Sequence[str]], settings: Settings) -> int:
    """The memory work of a change of the picks of ``draft`` (the name its picks are learned under): a pick the
    user removed is forgotten in this draft only (the same pick learned in another draft, or by ``fill`` and
    ``check``, stays); a new pick is learned. Returns how many pairs were new."""
    from citefinder.workflow.learn import learn_change

    pairs = picks.learned_pairs(results, before, after)
    taken_back = picks.unlearned_pairs(results, before, after)
    return learn_change(library, draft, pairs, taken_back, settings, source=picks.PICK_SOURCE)
