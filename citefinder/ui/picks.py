"""The user's picks on the Cite page: the papers each slot cites, kept through re-runs and edits, with undo.

Pure (no streamlit). ``Picks`` maps a slot index to the doc_ids the user chose for it, in the order they
are cited (``()`` = left empty); a slot the user has not touched has no entry and cites the selector's
pick. Picks belong to sentences, not to slot numbers: :func:`carry_over` moves them to the slots of a new
run whose sentence is unchanged, and sets aside (never drops silently) those whose sentence changed.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from citefinder.types import Slot, SlotResult

Picks = dict[int, tuple[str, ...]]
HISTORY = 50  # pick states kept for undo
PICK_SOURCE = "pick"  # what the memory calls a pick learned on the Cite page (forgotten there, draft by draft)


def as_ids(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """A slot's doc_ids from a pick as stored by any version: one id, None (left empty) or a list."""
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(dict.fromkeys(v for v in value if isinstance(v, str) and v))


def selector_pick(result: SlotResult) -> tuple[str, ...]:
    """What the engine cites for a slot: its pick (and a second paper it proposed), or nothing."""
    sel = result.selection
    if sel.status != "found" or sel.paper is None:
        return ()
    return (sel.paper.doc_id, *(p.doc_id for p in sel.also))


def current(results: Sequence[SlotResult], picks: Mapping[int, Sequence[str]]) -> Picks:
    """slot index -> the doc_ids it cites: the user's picks over the engine's."""
    out: Picks = {}
    for r in results:
        if r.slot is not None:
            out[r.slot.index] = as_ids(picks[r.slot.index]) if r.slot.index in picks else selector_pick(r)
    return out


def choose(picks: Picks, index: int, doc_id: str) -> Picks:
    """The slot cites ``doc_id`` alone."""
    return {**picks, index: (doc_id,)}


def add(picks: Picks, base: Sequence[str], index: int, doc_id: str) -> Picks:
    """``doc_id`` cited after the slot's papers (``base``: what the slot cites now)."""
    ids = tuple(base)
    return {**picks, index: ids if doc_id in ids else (*ids, doc_id)}


def remove(picks: Picks, base: Sequence[str], index: int, doc_id: str) -> Picks:
    return {**picks, index: tuple(i for i in base if i != doc_id)}


def move(picks: Picks, base: Sequence[str], index: int, doc_id: str, step: int) -> Picks:
    """``doc_id`` one place earlier (``step=-1``) or later in the slot's cite command."""
    ids = list(base)
    if doc_id not in ids:
        return picks
    i = ids.index(doc_id)
    j = min(max(i + step, 0), len(ids) - 1)
    ids[i], ids[j] = ids[j], ids[i]
    return {**picks, index: tuple(ids)}


def leave_empty(picks: Picks, index: int) -> Picks:
    return {**picks, index: ()}


# --- learning from the user ----------------------------------------------------------------------

def learned_pairs(results: Sequence[SlotResult], before: Mapping[int, Sequence[str]],
                  after: Mapping[int, Sequence[str]]) -> list[tuple[str, str]]:
    """The (sentence, doc_id) pairs a change of the user's picks teaches: every paper a slot cites now as
    the user's pick that it did not cite as the user's pick before (a slot the user had not touched
    counts all its papers: keeping the engine's pick is accepting it). The sentence is the slot's, with
    this slot written [CITATION] and the other markers [OTHER]. Reordering teaches nothing; a removed pick is
    forgotten (:func:`unlearned_pairs`)."""
    slots = {r.slot.index: r.slot for r in results if r.slot is not None}
    pairs: list[tuple[str, str]] = []
    for index, ids in after.items():
        slot = slots.get(index)
        if slot is None:
            continue
        was = set(as_ids(before[index])) if index in before else set()
        sentence = slot.focus or slot.sentence
        pairs += [(sentence, doc_id) for doc_id in as_ids(ids) if doc_id not in was]
    return pairs


def unlearned_pairs(results: Sequence[SlotResult], before: Mapping[int, Sequence[str]],
                    after: Mapping[int, Sequence[str]]) -> list[tuple[str, str]]:
    """The (sentence, doc_id) pairs a change of the user's picks takes back: a paper the user had picked for
    a slot and removed (or replaced) is forgotten, alone, in this draft (``ui/cite/learn.teach``); the other
    learned picks, and the same pick learned in another draft, stay."""
    slots = {r.slot.index: r.slot for r in results if r.slot is not None}
    pairs: list[tuple[str, str]] = []
    for index, ids in before.items():
        slot = slots.get(index)
        if slot is None or index not in after:
            continue
        now = set(as_ids(after[index]))
        pairs += [(slot.focus or slot.sentence, d) for d in as_ids(ids) if d not in now]
    return pairs


def draft_name(source_name: str | None, text: str) -> str:
    """The draft's name in the memory, the one ``citefinder fill`` gives the same file
    (:func:`citefinder.workflow.learn.draft_identity`)."""
    from citefinder.workflow.learn import draft_identity

    return draft_identity(source_name, text)


# --- through re-runs ------------------------------------------------------------------------------

def signatures(slots: Sequence[Slot]) -> list[tuple[str, int, int]]:
    """Per slot: its sentence (spaces normalised), which marker of that sentence it is, and which copy of
    that sentence in the draft: what stays the same when the text around it is edited."""
    out: list[tuple[str, int, int]] = []
    seen: dict[tuple[str, int], int] = {}
    for slot in slots:
        sentence = " ".join(slot.sentence.split())
        prev = out[-1] if out else None
        which = prev[1] + 1 if prev is not None and prev[0] == sentence else 0
        copy = seen.get((sentence, which), 0)
        seen[(sentence, which)] = copy + 1
        out.append((sentence, which, copy))
    return out


@dataclass(frozen=True)
class SetAside:
    """A pick whose slot's sentence changed: shown beside the new slot, applied only if the user says so."""

    ids: tuple[str, ...]
    sentence: str  # the sentence as it was when the user picked

    def to_dict(self) -> dict[str, object]:
        return {"ids": list(self.ids), "sentence": self.sentence}


@dataclass(frozen=True)
class Carry:
    """The picks of an old run moved onto a new run's slots."""

    picks: Picks  # by new slot index
    kept: int  # picks whose sentence is unchanged
    changed: dict[int, SetAside] = field(default_factory=dict)  # new slot index -> the pick set aside
    dropped: tuple[SetAside, ...] = ()  # picks of sentences that are gone (no slot to show them at)

    def summary(self) -> str:
        """One line for the page: what a re-run kept and what it set aside."""
        parts = [f"Kept {self.kept} pick{'s' if self.kept != 1 else ''} (their sentences did not change)"]
        if self.changed:
            n = len(self.changed)
            parts.append(f"{n} slot{'s' if n != 1 else ''} changed: your earlier pick is shown there to use again")
        if self.dropped:
            parts.append(f"{len(self.dropped)} pick{'s' if len(self.dropped) != 1 else ''} belonged to sentences "
                         "no longer in the draft")
        return "; ".join(parts) + "."


def carry_over(old: Sequence[Slot], picks: Mapping[int, Sequence[str]], new: Sequence[Slot],
               aside: Mapping[int, SetAside] | None = None) -> Carry:
    """Move ``picks`` (by old slot index) to the ``new`` slots: a slot whose sentence is unchanged keeps its
    pick; a pick on an edited sentence is set aside at the slot now in its place; the rest are dropped.
    Picks set aside by an earlier edit (``aside``) stay beside their slot while its sentence stays."""
    old_sigs, new_sigs = signatures(old), signatures(new)
    out: Picks = {}
    changed: dict[int, SetAside] = {}
    dropped: list[SetAside] = []
    kept = 0
    matcher = difflib.SequenceMatcher(a=old_sigs, b=new_sigs, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for k, o in enumerate(range(a0, a1)):
            slot = old[o]
            if tag == "equal" and aside and slot.index in aside and slot.index not in picks:
                changed[new[b0 + k].index] = aside[slot.index]
            if slot.index not in picks:
                continue
            was = SetAside(as_ids(picks[slot.index]), slot.sentence)
            if tag == "equal":
                out[new[b0 + k].index] = was.ids
                kept += 1
            elif tag == "replace" and b0 + k < b1:
                changed[new[b0 + k].index] = was
            else:
                dropped.append(was)
    return Carry(out, kept, changed, tuple(dropped))


# --- undo -----------------------------------------------------------------------------------------

def pushed(history: Sequence[Picks], picks: Picks) -> list[Picks]:
    """``history`` with ``picks`` (the state before a change) on top, at most :data:`HISTORY` long."""
    return [*history, dict(picks)][-HISTORY:]


def picks_to_json(picks: Mapping[int, Sequence[str]]) -> dict[str, list[str]]:
    return {str(k): list(as_ids(v)) for k, v in picks.items()}


def picks_from_json(data: object) -> Picks:
    """Picks as saved by any version (a doc_id, None or a list per slot); junk is skipped."""
    if not isinstance(data, dict):
        return {}
    out: Picks = {}
    for k, v in data.items():
        try:
            out[int(k)] = as_ids(v)
        except (TypeError, ValueError):
            continue
    return out
