"""The user's picks on the Cite page: what each slot cites (several papers if the user wants), changing that
(pick, add, remove, reorder, leave empty, use a pick an edit set aside) with undo, moving through the slots to
check (keys n / p), and a slot's status in words. The picks themselves are pure data (:mod:`citefinder.ui.picks`).
"""

from __future__ import annotations

import streamlit as st

from citefinder.config import Settings
from citefinder.types import Paper, SlotResult
from citefinder.ui import exports, picks, state
from citefinder.ui.cite.draft import changed_state, choices_state, extra_state, history_state, save_workspace, slot_of
from citefinder.ui.cite.learn import learn_change
from citefinder.ui.words import UNLIKELY, UNSURE, confidence_words

CARDS, TABLE = "Cards", "Table"
ALL, NOT_FOUND, UNSURE_FILTER = "All", "Not found", "Unsure"
USER_PICK, LEFT_EMPTY, NOT_FOUND_S = "your pick", "left empty", "not found"


def current_choices(run: state.CiteRun) -> picks.Picks:
    """What each slot cites: the selector's picks, overridden by the user's."""
    return picks.current(run.results, choices_state())


def _change(settings: Settings, new: picks.Picks, papers: tuple[Paper, ...] = ()) -> None:
    """Make ``new`` the user's picks (the old ones go on the undo history), save, then learn the papers newly
    picked (:mod:`citefinder.ui.cite.learn`; undo, removing and reordering unlearn nothing)."""
    old = dict(choices_state())
    if new == old:
        return
    st.session_state[state.CITE_HISTORY] = picks.pushed(history_state(), old)
    st.session_state[state.CITE_CHOICES] = new
    st.session_state.pop(UNDONE, None)
    extra_state().update({p.doc_id: p for p in papers})
    save_workspace(settings)
    learn_change(settings, old, new)


def _cited(run: state.CiteRun, index: int) -> tuple[str, ...]:
    return current_choices(run).get(index, ())


def choose(settings: Settings, slot_index: int, doc_id: str | None, paper: Paper | None = None) -> None:
    """The slot cites ``doc_id`` alone (None: left empty)."""
    new = (picks.choose(choices_state(), slot_index, doc_id) if doc_id is not None
           else picks.leave_empty(choices_state(), slot_index))
    _change(settings, new, (paper,) if paper is not None else ())


def add(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str, paper: Paper | None = None) -> None:
    """``doc_id`` is cited after the slot's papers."""
    _change(settings, picks.add(choices_state(), _cited(run, slot_index), slot_index, doc_id),
            (paper,) if paper is not None else ())


def remove(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str) -> None:
    _change(settings, picks.remove(choices_state(), _cited(run, slot_index), slot_index, doc_id))


def move(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str, step: int) -> None:
    _change(settings, picks.move(choices_state(), _cited(run, slot_index), slot_index, doc_id, step))


def by_key(settings: Settings, run: state.CiteRun, slot_index: int, doc_id: str, paper: Paper) -> None:
    """Keys 1-5 on the slot in review: pick that candidate, or add it when *a* was pressed just before."""
    if st.session_state.pop(state.CITE_ADDING, False):
        add(settings, run, slot_index, doc_id, paper)
    else:
        choose(settings, slot_index, doc_id, paper)


def arm_adding() -> None:
    st.session_state[state.CITE_ADDING] = not st.session_state.get(state.CITE_ADDING, False)


def use_set_aside(settings: Settings, slot_index: int) -> None:
    """Cite again what the user had picked before editing this slot's sentence."""
    aside = changed_state().pop(slot_index, None)
    if aside is not None:
        _change(settings, {**choices_state(), slot_index: aside.ids})


def dismiss_set_aside(settings: Settings, slot_index: int) -> None:
    changed_state().pop(slot_index, None)
    save_workspace(settings)


def undo(settings: Settings, run: state.CiteRun | None = None) -> None:
    """Back to the picks before the last change of this browser session (key u): the slot it changed is put in
    review and brought into view, and the page says what was undone."""
    history = history_state()
    if history:
        before = dict(choices_state())
        after = history.pop()
        st.session_state[state.CITE_CHOICES] = after
        save_workspace(settings)
        # what the undo takes back is forgotten (a slot back to the engine's pick is no pick of the user's);
        # what it brings back is learned again
        learn_change(settings, before, {**{i: () for i in before if i not in after}, **after})
        if run is not None:
            _show_undone(run, before, after)


UNDONE = "cite_undone"  # (slot index, what the last undo did, in words): said on that slot's card


def _show_undone(run: state.CiteRun, before: picks.Picks, after: picks.Picks) -> None:
    """Put the slot the undo changed in review, bring it into view, and say what it cites again."""
    was, now = picks.current(run.results, before), picks.current(run.results, after)
    changed = [i for i in now if was.get(i) != now.get(i)]
    if not changed:
        st.session_state.pop(UNDONE, None)
        return
    index = changed[0]
    result = next(r for r in run.results if slot_of(r).index == index)

    def titles(ids: tuple[str, ...]) -> str:
        found = [exports.paper_for(result, i, extra_state()) or exports.paper_of(run.results, i, extra_state())
                 for i in ids]
        return " + ".join(f"“{p.title}”" if p is not None else i for p, i in zip(found, ids, strict=True))

    whose = "your pick" if index in after else "the engine's pick"
    again = f"cites {titles(now[index])} again ({whose})" if now[index] else "is left empty again"
    gone = f"instead of {titles(was[index])}" if was[index] else "instead of nothing"
    more = f" ({len(changed) - 1} other slot{'s' if len(changed) > 2 else ''} too)" if len(changed) > 1 else ""
    st.session_state[UNDONE] = (index, f"Undone: slot {index + 1} {again}, {gone}{more}.")
    st.session_state[state.CITE_FOCUS] = index
    st.session_state[state.CITE_SCROLL] = f"slot_{run.run_id}_{index}"


def undone_note(index: int) -> str | None:
    """What the last undo did, when it changed slot ``index`` (shown on its card until the next change)."""
    last = st.session_state.get(UNDONE)
    return last[1] if last and last[0] == index else None


def accept(settings: Settings, run: state.CiteRun, slot_index: int, ids: tuple[str, ...]) -> None:
    """Keep the slot's current papers as the user's, then go to the next slot to check."""
    _change(settings, {**choices_state(), slot_index: ids})
    step(run, slot_index, +1)


def to_check(run: state.CiteRun) -> list[int]:
    """Slots still to look at: not found, or the selector unsure, and not decided by the user."""
    said = statuses(run, current_choices(run))
    return [i for i, status in said.items() if status in (NOT_FOUND_S, UNSURE, UNLIKELY)]


def step(run: state.CiteRun, after: int | None, direction: int) -> None:
    """Keys n / p: the next (previous) slot to check after ``after`` becomes the one in review and is
    brought into view; when none is left to check, the next (previous) slot."""
    every = [slot_of(r).index for r in run.results]
    todo = to_check(run) or every
    if after is None:
        pool = todo if direction > 0 else todo[::-1]
    elif direction > 0:
        pool = [i for i in todo if i > after] or [i for i in every if i > after] or todo
    else:
        pool = [i for i in todo[::-1] if i < after] or [i for i in every[::-1] if i < after] or todo[::-1]
    if pool:
        st.session_state[state.CITE_FOCUS] = pool[0]
        st.session_state[state.CITE_SCROLL] = f"slot_{run.run_id}_{pool[0]}"
        st.session_state.pop(state.CITE_ADDING, None)


def next_to_check(run: state.CiteRun, after: int | None = None) -> None:
    step(run, after, +1)


def focus(run: state.CiteRun) -> int | None:
    """The slot in review: the one the user moved to, else the first to check."""
    focused = st.session_state.get(state.CITE_FOCUS)
    indexes = {slot_of(r).index for r in run.results}
    if focused in indexes:
        return focused
    todo = to_check(run)
    return todo[0] if todo else None


def shown_confidences(result: SlotResult) -> dict[str, float]:
    """Each candidate's probability of being the cited paper, never above a candidate shown before it
    (:func:`citefinder.rank.calibration.shown_probabilities`)."""
    from citefinder.rank.calibration import shown_probabilities

    trace = result.trace("select")
    if trace is None:
        return {}
    order = {c.doc_id: n for n, c in enumerate(result.candidates)}
    hits = sorted(trace.top, key=lambda h: order.get(h.doc_id, len(order)))
    return dict(zip((h.doc_id for h in hits), shown_probabilities([h.score for h in hits]), strict=True))


_PROBABILITIES: dict[int, tuple[SlotResult, float]] = {}  # id(result) -> (result, its probability)


def slot_probability(result: SlotResult) -> float:
    """The number a slot is sorted by: the shown probability of the engine's pick (its top candidate's
    when it abstained). Worked out once per result (results never change; each run of a long draft's page
    asks for every slot several times: n / p took a fifth of a second more)."""
    held = _PROBABILITIES.get(id(result))
    if held is not None and held[0] is result:
        return held[1]
    if len(_PROBABILITIES) > 20_000:  # the results of old runs are let go
        _PROBABILITIES.clear()
    p = _slot_probability(result)
    _PROBABILITIES[id(result)] = (result, p)
    return p


def _slot_probability(result: SlotResult) -> float:
    shown = shown_confidences(result)
    sel = result.selection.paper
    key = sel.doc_id if sel is not None else (result.candidates[0].doc_id if result.candidates else None)
    return shown.get(key, result.selection.confidence) if key is not None else 0.0


def slot_status(result: SlotResult, choices: picks.Picks) -> str:
    """In words: your pick, left empty, not found, or the selector's confidence in words."""
    index = slot_of(result).index
    if index in choices_state():
        return USER_PICK if choices.get(index) else LEFT_EMPTY
    if not choices.get(index):
        return NOT_FOUND_S
    return confidence_words(slot_probability(result))


def statuses(run: state.CiteRun, choices: picks.Picks) -> dict[int, str]:
    """Every slot's status (:func:`slot_status`), the user's picks read once: what a run of the page asks for."""
    picked = choices_state()
    out: dict[int, str] = {}
    for r in run.results:
        index = slot_of(r).index
        if index in picked:
            out[index] = USER_PICK if choices.get(index) else LEFT_EMPTY
        else:
            out[index] = confidence_words(slot_probability(r)) if choices.get(index) else NOT_FOUND_S
    return out


def matches_filter(status: str, which: str) -> bool:
    if which == NOT_FOUND:
        return status == NOT_FOUND_S
    if which == UNSURE_FILTER:
        return status in (UNSURE, UNLIKELY)
    return True

