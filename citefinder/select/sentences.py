"""One sentence, different papers: two markers of a sentence are not auto-filled with the same paper.

"Deep networks are trained with adaptive moment estimation [CITATION], regularized by randomly dropping
units [CITATION], and normalized over each mini-batch [CITATION]" cites three papers; each slot's query
holds the whole sentence, so the paper that fits all of it best (Batch Normalization) came out first for
every marker. Markers of one sentence (one cite command's placeholders too: ``\\citep{?, ?}``) are different
citations unless the text says otherwise — the same name written next to both ("BERT [CITATION] ... the
BERT encoder [CITATION]"). So when the threshold rule would fill two of them with one paper, the more
confident keeps it and the other is ranked and filled again as if the library did not hold it; a marker
left unfilled whose first candidate is a paper the threshold rule put into another marker of its sentence
is ranked again without it as well
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


def top_choice(r: SlotResult) -> str | None:
    """The paper the threshold rule filled the slot with or would have (its top candidate), or None when a user
    or an LLM decided."""
    if r.selection.method not in CHECKED_METHODS or not r.candidates:
        return None
    return auto_filled(r) or r.candidates[0].doc_id


def same_name(a: SlotResult, b: SlotResult) -> bool:
    """The text says the two markers cite one thing: the name nearest each marker is the same (two
    placeholders of one cite command read the same words, which says nothing)."""
    if not a.query.names or not b.query.names or (a.slot and b.slot and a.slot.start == b.slot.start):
        return False
    return normalize_name(a.query.names[0]) == normalize_name(b.query.names[0])


def _claims(a: SlotResult, b: SlotResult) -> bool:
    """``a`` is auto-filled with the paper ``b`` has first, ``b`` another marker of its sentence."""
    doc = auto_filled(a)
    return doc is not None and top_choice(b) == doc and same_sentence(a, b) and not same_name(a, b)


def clash(result: SlotResult, others: Sequence[SlotResult]) -> SlotResult | None:
    """The first of ``others`` in ``result``'s sentence such that one of the two is auto-filled with the paper the
    other has first (filled or not; not the same name next to both markers), or None."""
    return next((r for r in others if _claims(result, r) or _claims(r, result)), None)


def gives_way(a: SlotResult, b: SlotResult) -> bool:
    """Whether ``a`` (not ``b``) is cited again without the paper the two share: the one not filled with it; when
    both are, the less confident; on a tie, the later marker."""
    if auto_filled(a) is None or auto_filled(b) is None:
        return auto_filled(a) is None
    ca, cb = a.selection.confidence, b.selection.confidence
    if ca != cb:
        return ca < cb
    return (a.slot.index if a.slot else 0) > (b.slot.index if b.slot else 0)


def gave_way(result: SlotResult, title: str, winner: SlotResult, confidence: float) -> SlotResult:
    """``result`` (cited again without the paper titled ``title``, which was its first candidate at ``confidence``)
    saying why, on its card and in its trace."""
    n = winner.slot.index + 1 if winner.slot is not None else 0
    why = (f"{title} is the pick of slot {n} in the same sentence (confidence {winner.selection.confidence:.2f} "
           f"against {confidence:.2f} here): markers of one sentence cite different papers, so this slot's "
           f"candidates were ranked without it")
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
