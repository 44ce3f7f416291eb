"""The citations a LaTeX draft already holds: every key of every filled cite command, in text order,
each with the context of its command (as a :class:`~citefinder.types.Slot` would have it) and its
own span, so a key can be checked against its context and replaced alone."""

from __future__ import annotations

from dataclasses import dataclass

from citefinder.text.latex import scan_latex
from citefinder.text.slots import PLAIN_MARKER_RE, Marker, slots_at
from citefinder.types import Slot


@dataclass(frozen=True)
class Citation:
    """One key of a cite command: ``\\citep{a, b}`` gives two, sharing ``slot`` and ``group``."""

    key: str
    start: int  # the key's own span in the text (replace it to change this citation only)
    end: int
    slot: Slot  # the command as a slot: its sentence and context, the command shown as [CITATION]
    command: str
    group: int  # which cite command (0-based, text order)
    others: tuple[str, ...] = ()  # the other keys of the same command


def find_citations(text: str, context_sentences: int = 0) -> list[Citation]:
    """Every cited key of ``text`` (read as LaTeX), in text order; ``\\nocite`` and placeholders are not
    citations, and other cite commands and markers are left out of each context."""
    scan = scan_latex(text)
    markers = [Marker(c.start, c.end, text[c.start:c.end], c.command) for c in scan.cites]
    taken = list(scan.skipped) + [(c.start, c.end) for c in scan.cites]
    markers += [Marker(m.start(), m.end(), m.group(0)) for m in PLAIN_MARKER_RE.finditer(text)
                if not any(a <= m.start() < b for a, b in taken)]
    markers.sort(key=lambda m: m.start)
    slots = slots_at(text, markers, scan.skipped, context_sentences, latex=True)
    by_start = {s.start: s for s in slots}
    out: list[Citation] = []
    group = 0
    for cite in scan.cites:
        keys = [k for k in cite.keys if not k.placeholder]
        if not keys or scan.is_skipped(cite.start):  # a cite in the preamble (a macro's definition) is no prose
            continue
        slot = by_start[cite.start]
        for k in keys:
            out.append(Citation(k.text, k.start, k.end, slot, cite.command, group,
                                tuple(o.text for o in keys if o is not k)))
        group += 1
    return out


def replace_keys(text: str, citations: list[Citation], new: dict[int, str]) -> str:
    """``text`` with citation ``i`` (an index into ``citations``) written ``new[i]``; nothing else changes."""
    out, pos = [], 0
    for i in sorted(new, key=lambda i: citations[i].start):
        c = citations[i]
        out += [text[pos:c.start], new[i]]
        pos = c.end
    out.append(text[pos:])
    return "".join(out)
