"""Why a candidate may fit a slot: the sentence of its abstract that best matches the slot's text.

Pure and cheap (word overlap weighted by word length, no model): shown under each candidate on
the Cite page so a researcher can judge it without opening the paper.
"""

from __future__ import annotations

import re
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the their this to was we were which with "
    "our these those can also into than then such using used use via citation other show shows showed".split()
)


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def best_sentence(abstract: str, slot_text: str, max_chars: int = 240) -> str:
    """The abstract sentence sharing the most (longer = weightier) words with ``slot_text``, shortened.

    The first sentence when none shares a word; "" for an empty abstract.
    """
    parts = sentences(abstract or "")
    if not parts:
        return ""
    wanted = words(slot_text)

    def score(sentence: str) -> float:
        return sum(min(len(w), 10) for w in words(sentence) & wanted)

    best = max(parts, key=score)  # max keeps the first of equal scores
    if len(best) > max_chars:
        best = best[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return best


def cited_elsewhere(library: Any, slot_text: str, doc_id: str) -> dict[str, Any] | None:
    """The sentence from the library's citation-context memory that cites ``doc_id`` and is nearest to
    ``slot_text`` ("cited elsewhere as: ..."), with where it comes from; None without one.

    ``{"text", "citing", "citing_title", "source", "origin", "similarity"}``; ``origin`` "user" marks
    the user's own earlier pick."""
    from citefinder.index.citations import CITATION_VECTORS
    from citefinder.index.memory import memory_index
    from citefinder.index.vectors import query_vector
    from citefinder.library.contexts.memory import memory_of

    index, _ = memory_index(library, CITATION_VECTORS)
    if index is None or not slot_text.strip():
        return None
    best = index.nearest_for(query_vector(library, slot_text, against="sentences"), doc_id)
    if best is None:
        return None
    found = memory_of(library).evidence([best[0]]).get(best[0])
    return {**found.to_dict(), "similarity": round(best[1], 4)} if found else None


def candidate_elsewhere(library: Any, result: Any, doc_id: str) -> dict[str, Any] | None:
    """The "cited elsewhere as" sentence for one candidate of a slot's result, as cheaply as it can be had:
    the cited-like agent's trace when it holds it (no work), else the memory's nearest sentence to the
    text that agent read (embedded once per text and remembered, :func:`citefinder.index.vectors.query_vector`).
    None when the agent skipped (no memory) or failed, or the memory never cites the paper."""
    trace = result.trace("cited-like")
    if trace is not None:
        if trace.status != "ok":
            return None
        held = (trace.details.get("cited_elsewhere_as") or {}).get(doc_id)
        if held:
            return dict(held)
        text = str(trace.inputs.get("text") or "")
    else:
        slot = result.slot
        text = (slot.focus or slot.sentence) if slot is not None else result.query.text
    return cited_elsewhere(library, text, doc_id)


def elsewhere_line(evidence: dict[str, Any], max_chars: int = 240) -> str:
    """One line for a card: the citing sentence and where it comes from (the user's own pick, or the citing
    paper and the source)."""
    text = " ".join(str(evidence.get("text") or "").split())
    if len(text) > max_chars:
        text = text[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    if evidence.get("origin") == "user":
        where = "your earlier pick"
    else:
        where = str(evidence.get("citing_title") or evidence.get("citing") or "")
        source = evidence.get("source")
        if source and source not in where:
            where = f"{where}, {source}" if where else str(source)
    return f"cited elsewhere as: “{text}”" + (f" ({where})" if where else "")
