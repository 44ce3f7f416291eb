"""Write the chosen references back into the draft as ``\\cite{key}``."""

from __future__ import annotations

import logging
from typing import Sequence

from citefinder.errors import InputError
from citefinder.types import Slot

log = logging.getLogger(__name__)


def fill_draft(text: str, slots: Sequence[Slot], keys: dict[int, str]) -> str:
    """``text`` with the marker of every slot in ``keys`` (slot.index -> bib key) replaced by
    ``\\cite{key}``; slots without a key are left as they are.

    Raises InputError when a slot's span no longer holds its marker (slots found in another text).
    """
    filled = text
    # From the end, so the spans of earlier slots stay valid.
    for slot in sorted(slots, key=lambda s: s.start, reverse=True):
        key = keys.get(slot.index)
        if not key:
            continue
        if text[slot.start : slot.end] != slot.marker:
            raise InputError(
                f"Slot {slot.index + 1} does not match the text at characters {slot.start}-{slot.end}; "
                f"the draft changed since the slots were found. Find the slots again."
            )
        filled = f"{filled[: slot.start]}\\cite{{{key}}}{filled[slot.end :]}"
    log.debug("filled %d of %d slots", sum(1 for s in slots if keys.get(s.index)), len(slots))
    return filled


def unfilled_report(slots: Sequence[Slot], keys: dict[int, str], width: int = 100) -> list[str]:
    """One line per slot left unfilled: its number and the sentence it sits in (shortened)."""
    lines = []
    for slot in sorted(slots, key=lambda s: s.index):
        if keys.get(slot.index):
            continue
        sentence = slot.sentence
        if len(sentence) > width:
            sentence = sentence[: width - 3].rsplit(" ", 1)[0].rstrip() + "..."
        marker = " ".join(slot.marker.split())
        lines.append(f'Slot {slot.index + 1} left as {marker} (no reference chosen): "{sentence}"')
    return lines
