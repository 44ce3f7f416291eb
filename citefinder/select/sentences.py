"""One sentence, different papers: two markers of a sentence are not auto-filled with the same paper.

"Deep networks are trained with adaptive moment estimation [CITATION], regularized by randomly dropping
units [CITATION], and normalized over each mini-batch [CITATION]" cites three papers; each slot's query
holds the whole sentence, so the paper that fits all of it best (Batch Normalization) came out first for
every marker. Markers of one sentence (one cite command's placeholders too: ``\\citep{?, ?}``) are different
citations unless the text says otherwise — the same name written next to both ("BERT [CITATION] ... the
BERT encoder [CITATION]"). So when the threshold rule would fill two of them with one paper, the more
confident keeps it and the other is filled again as if the library did not hold it
(:func:`citefinder.pipeline.concurrency.cite_slots` does the filling; this module decides and says why).
A user's pick and an LLM's choice are left alone, as in :mod:`citefinder.select.hubs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from citefinder.index.names import normalize_name
from citefinder.types import SlotResult, StageTrace

CHECKED_METHODS = ("threshold",)


def same_sentence(a: SlotResult, b: SlotResult) -> bool:
    """Two slots of one sentence: the same sentence text, their markers no further apart than it is long."""
    if a.slot is None or b.slot is None or a.slot.index == b.slot.index:
        return False
    return a.slot.sentence == b.slot.sentence and abs(a.slot.start - b.slot.start) <= len(a.slot.sentence)


def auto_filled(r: SlotResult) -> str | None:
    """The paper the threshold rule filled the slot with, or None (not found, or chosen otherwise)."""
    sel = r.selection
    if sel.status != "found" or sel.paper is None or sel.method not in CHECKED_METHODS:
        return None
    return sel.paper.doc_id


def same_name(a: SlotResult, b: SlotResult) -> bool:
    """The text says the two markers cite one thing: the name nearest each marker is the same (two
    placeholders of one cite command read the same words, which says nothing)."""
    if not a.query.names or not b.query.names or (a.slot and b.slot and a.slot.start == b.slot.start):
        return False
    return normalize_name(a.query.names[0]) == normalize_name(b.query.names[0])


def clash(result: SlotResult, others: Sequence[SlotResult]) -> SlotResult | None:
    """The first of ``others`` in ``result``'s sentence auto-filled with ``result``'s paper (not the same
    name next to both), or None."""
    doc = auto_filled(result)
    if doc is None:
        return None
    for r in others:
        if same_sentence(result, r) and auto_filled(r) == doc and not same_name(result, r):
            return r
    return None


def gives_way(a: SlotResult, b: SlotResult) -> bool:
    """Whether ``a`` (not ``b``) is filled again without the paper both would get: the less confident one;
    on a tie, the later marker."""
    ca, cb = a.selection.confidence, b.selection.confidence
    if ca != cb:
        return ca < cb
    return (a.slot.index if a.slot else 0) > (b.slot.index if b.slot else 0)


def gave_way(result: SlotResult, title: str, winner: SlotResult, confidence: float) -> SlotResult:
    """``result`` (filled again without the paper titled ``title``) saying why, on its card and in its trace."""
    n = winner.slot.index + 1 if winner.slot is not None else 0
    why = (f"{title} is the pick of slot {n} in the same sentence (confidence {winner.selection.confidence:.2f} "
           f"against {confidence:.2f} here): markers of one sentence cite different papers, so this slot was "
           f"filled without it")
    sel = result.selection
    if sel.status != "found":
        why += ", and nothing else clears the threshold"
    traces = tuple(_noted(t, why) if t.agent == "select" else t for t in result.traces)
    return replace(result, selection=replace(sel, reasoning=f"{sel.reasoning}; {why}".lstrip("; ")), traces=traces)


def _noted(trace: StageTrace, why: str) -> StageTrace:
    return replace(trace, message=f"{trace.message}; {why}", details={**trace.details, "sentence": {"why": why}})


def gave_way_why(result: SlotResult) -> str | None:
    """Why this slot was filled without a sentence-mate's paper, or None."""
    trace = result.trace("select")
    note = trace.details.get("sentence") if trace is not None else None
    return str(note["why"]) if isinstance(note, dict) and note.get("why") else None
