"""The draft's other citations near a slot: the seeds of the "co-cited" agent.

Two kinds: the keys a LaTeX draft already cites next to the slot (``\\citep{vaswani2017, ?}`` has one
filled key beside its placeholder; ``\\cite{lecun1998}`` a sentence earlier another), resolved to library
papers by their citation keys, and the confident picks of the slots before it in the same fill.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from citefinder.text.slots import placeholder_keys
from citefinder.types import Slot, SlotResult

# \citep*[see][p.~3]{a, b}: a cite command (not \nocite), at most two optional arguments, its keys.
_CITE = re.compile(r"\\(?P<cmd>[a-zA-Z]*cite[a-zA-Z]*)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{(?P<keys>[^{}]*)\}")


def filled_keys(text: str) -> list[tuple[int, str]]:
    """(position, key) of every real key the text cites (placeholders such as ``?`` or ``TODO`` left out)."""
    out: list[tuple[int, str]] = []
    for m in _CITE.finditer(text):
        if m.group("cmd").lower().startswith("no"):
            continue
        items = m.group("keys").split(",")
        holes = set(placeholder_keys(m.group("keys")))
        out += [(m.start(), item.strip()) for n, item in enumerate(items) if n not in holes and item.strip()]
    return out


def keys_near(text: str, slots: Sequence[Slot], window: int) -> dict[int, tuple[str, ...]]:
    """slot index -> the filled keys cited within ``window`` characters of it, nearest first."""
    keys = filled_keys(text)
    out: dict[int, tuple[str, ...]] = {}
    if not keys or window <= 0:
        return out
    for slot in slots:
        near = sorted((abs(pos - slot.start), key) for pos, key in keys if abs(pos - slot.start) <= window)
        if near:
            out[slot.index] = tuple(dict.fromkeys(key for _, key in near))
    return out


def seeds_near(text: str, slots: Sequence[Slot], window: int,
               resolve: Callable[[str], str | None]) -> dict[int, tuple[str, ...]]:
    """slot index -> the library papers (doc_ids) of the filled keys near it; ``resolve(key)`` finds a key's paper."""
    known: dict[str, str | None] = {}
    out: dict[int, tuple[str, ...]] = {}
    for index, keys in keys_near(text, slots, window).items():
        docs = []
        for key in keys:
            if key not in known:
                known[key] = resolve(key)
            if known[key]:
                docs.append(known[key])
        if docs:
            out[index] = tuple(dict.fromkeys(d for d in docs if d))
    return out


def picks_near(slot: Slot, earlier: Sequence[SlotResult], window: int, threshold: float) -> tuple[str, ...]:
    """The papers picked with at least ``threshold`` confidence for slots within ``window`` characters
    before ``slot`` (nearest first)."""
    near = []
    for r in earlier:
        s, sel = r.slot, r.selection
        if s is None or s.index == slot.index or sel.status != "found" or sel.paper is None:
            continue
        if sel.confidence >= threshold and abs(slot.start - s.start) <= window:
            near.append((abs(slot.start - s.start), sel.paper.doc_id))
    return tuple(dict.fromkeys(d for _, d in sorted(near)))


def merge(*seeds: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(d for group in seeds for d in group))


def seeds_for(slot: Slot, seeds: Mapping[int, tuple[str, ...]] | None) -> tuple[str, ...]:
    return tuple(seeds.get(slot.index, ())) if seeds else ()
