"""Hubs: one paper as the confident pick of many unrelated slots of a draft.

A sentence that cites nothing in the library still has a top candidate, and some papers (a broad title, an
abstract full of common words) come out on top of many such sentences: on a draft of random-word sentences
one paper took 88 of 110 auto-filled slots. A paper cited twice in a real draft is usually cited for the
same thing (its name, its method's words come back). So, slot after slot in draft order: the first time a
paper is auto-filled it stays; a later slot that would auto-fill it with a sentence *unlike* every sentence
it already fills (no shared name next to the marker, few shared words) has its confidence multiplied by
:data:`HUB_FACTOR`; below the threshold it is not filled, and the slot's trace and card say why.
A user's pick and an LLM's choice are left alone: the check reads the threshold rule's fills only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from citefinder.index.names import normalize_name
from citefinder.retrieve.query.reformulate import STOPWORDS
from citefinder.select.named import named_why
from citefinder.select.sentences import gave_way_why
from citefinder.types import Hit, SlotResult, StageTrace

HUB_FACTOR = 0.8  # chosen on the drafts-dev training part: the strongest that lost no right fill (bench/RESULTS.md)
HUB_AFTER = 1  # how many earlier fills unlike this sentence the paper may have before its confidence drops
ALIKE = 0.25  # overlap coefficient of the sentences' content words at or above which they are alike
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{2,}")
CHECKED_METHODS = ("threshold",)


def content_words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS and w.lower() != "citation")


def _sentence(r: SlotResult) -> str:
    return r.slot.sentence if r.slot is not None else r.query.text


def alike(a: SlotResult, b: SlotResult) -> bool:
    """Two slots cite the same paper for the same thing: one sentence (two markers of it), a name next to one
    marker that the other sentence also writes, or sentences sharing at least :data:`ALIKE` of the shorter
    one's content words."""
    sa, sb = _sentence(a), _sentence(b)
    if sa == sb:
        return True
    wa, wb = content_words(sa), content_words(sb)
    keys_a = {normalize_name(n) for n in a.query.names} | {normalize_name(w) for w in wa}
    keys_b = {normalize_name(n) for n in b.query.names} | {normalize_name(w) for w in wb}
    if {normalize_name(n) for n in a.query.names} & keys_b or {normalize_name(n) for n in b.query.names} & keys_a:
        return True
    if not wa or not wb:
        return False
    return len(wa & wb) / min(len(wa), len(wb)) >= ALIKE


def hold_back(result: SlotResult, earlier: Sequence[SlotResult], threshold: float,
              factor: float | None = None, after: int | None = None) -> SlotResult:
    """``result`` as it stands after the check against the ``earlier`` slots of its draft (see the module doc)."""
    sel = result.selection
    if sel.status != "found" or sel.paper is None or sel.method not in CHECKED_METHODS:
        return result
    doc = sel.paper.doc_id
    before = [r for r in earlier
              if r.selection.status == "found" and r.selection.paper is not None and r.selection.paper.doc_id == doc]
    factor = HUB_FACTOR if factor is None else factor
    after = HUB_AFTER if after is None else after
    if len(before) < after or any(alike(result, r) for r in before):
        return result
    first = before[0].slot.index + 1 if before[0].slot is not None else 0
    conf = round(sel.confidence * factor, 4)
    why = (f"{sel.paper.title} is already the pick of slot {first}, whose sentence is unlike this one: a paper that "
           f"fits unrelated sentences is more often a loose match, so its confidence drops from {sel.confidence:.2f} "
           f"to {conf:.2f}")
    if conf >= threshold:
        selection = replace(sel, confidence=conf, reasoning=f"{sel.reasoning}; {why}")
    else:
        why += f", below the threshold {threshold:.2f}: not filled"
        selection = replace(sel, status="not_found", paper=None, also=(), confidence=conf,
                            reasoning=f"{sel.reasoning}; {why}")
    filled = selection.status == "found"
    traces = tuple(_held(t, doc, conf, first, why, filled) if t.agent == "select" else t for t in result.traces)
    return replace(result, selection=selection, traces=traces)


def _held(trace: StageTrace, doc: str, conf: float, first: int, why: str, filled: bool) -> StageTrace:
    top = tuple(Hit(h.doc_id, h.rank, conf) if h.doc_id == doc else h for h in trace.top)
    details = {**trace.details, "hub": {"paper": doc, "first_slot": first, "confidence": conf, "why": why},
               "selected": doc if filled else None}
    return replace(trace, top=top, message=f"{trace.message}; {why}", details=details)


def held_back(result: SlotResult) -> str | None:
    """Why the hub check lowered this slot's confidence, or why the slot gave its paper up to another marker
    of its sentence (:mod:`citefinder.select.sentences`), or why the name rule changed its pick
    (:mod:`citefinder.select.named`), or None."""
    trace = result.trace("select")
    hub = trace.details.get("hub") if trace is not None else None
    if isinstance(hub, dict) and hub.get("why"):
        return str(hub["why"])
    return gave_way_why(result) or named_why(trace)
