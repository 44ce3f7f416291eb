"""A preprint's .bib entry rewritten as its published version, field by field, and a whole .bib with only those
entries replaced, every other byte kept: :func:`updated_entry`, :func:`update_text` (over
:mod:`citefinder.library.bibfields`' spans)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from citefinder.library.bibfields import Entry, Field, parse_entry
from citefinder.library.published import VENUE_FIELDS, Published, names_server


def _style(entry: Entry) -> tuple[str, str]:
    """How the entry writes a new field: the line start (indent) and the ``=`` with its spaces."""
    if not entry.fields:
        return "\n  ", " = "
    f = entry.fields[0]
    line_start = entry.text.rfind("\n", 0, f.start)
    indent = entry.text[line_start:f.start] if line_start >= 0 else " "
    eq = entry.text[f.start + len(f.name):f.end - len(f.raw)]
    return indent, eq or " = "


def _named(name: str, eq: str, first: Field | None) -> str:
    """``name`` and its ``=`` aligned as the entry's first field is (``author    = {``) when it pads."""
    pad = len(eq) - len(eq.lstrip(" "))
    if first is None or pad < 2:
        return name + eq
    return name.ljust(len(first.name) + pad) + eq.lstrip(" ")


def _drops(entry: Entry, published: Published) -> set[str]:
    """The fields that named the preprint (and the venue field of the other kind)."""
    out = {f.name.lower() for f in entry.fields if f.name.lower() in VENUE_FIELDS and names_server(f.plain)}
    volume = entry.field("volume")
    if volume is not None and volume.plain.lower().startswith("abs/"):
        out.add("volume")
    doi = entry.field("doi")
    if doi is not None and published.doi and "10.48550/arxiv" in doi.plain.lower():
        out.add("doi")
    out.add("journal" if published.entry_type == "inproceedings" else "booktitle")
    return out


def updated_entry(text: str, published: Published, key: str | None = None) -> str:
    """The entry ``text`` (one entry, or the first of ``key``) as its published version: the type, the venue
    field, year, pages, volume / number (an article's) and DOI set, the fields that named the preprint dropped;
    every other field kept as written."""
    entry = parse_entry(text, key)
    if entry is None:
        raise ValueError("no BibTeX entry to update")
    asked = {published.venue_field: published.venue, "year": str(published.year) if published.year else None,
            "pages": published.pages, "doi": published.doi}
    if published.entry_type == "article":
        asked.update(volume=published.volume, number=published.number)
    want: dict[str, str] = {k: v for k, v in asked.items() if v}
    drops = _drops(entry, published) - set(want)
    fields = entry.fields
    edits: list[tuple[int, int, str]] = [(*entry.type_span, published.entry_type)]
    done: set[str] = set()
    kept = [i for i, f in enumerate(fields) if f.name.lower() not in drops]
    for i, f in enumerate(fields):
        name = f.name.lower()
        if name in drops:
            if not kept:
                if i == 0:
                    edits.append((fields[0].start, fields[-1].end, ""))
            elif i < kept[0]:
                edits.append((f.start, fields[i + 1].start, ""))
            else:
                edits.append((fields[i - 1].end, f.end, ""))
        elif name in want and name not in done:
            edits.append((f.end - len(f.raw), f.end, _braced(want[name])))
            done.add(name)
    indent, eq = _style(entry)
    first = fields[0] if fields else None
    new = [f"{indent}{_named(name, eq, first)}{_braced(value)}" for name, value in want.items() if name not in done]
    if new:
        at = fields[-1].end if fields else entry.close
        edits.append((at, at, ("," if kept else "") + ",".join(new) + ("" if fields else "\n")))
    for start, end, repl in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + repl + text[end:]
    return text


def _braced(value: str) -> str:
    return "{" + value.replace("{", "").replace("}", "") + "}" if value.count("{") != value.count("}") \
        else "{" + value + "}"


def entry_span(text: str, key: str) -> tuple[int, int] | None:
    """The first entry of ``key`` in ``text``: from its ``@`` to its closing brace (inclusive)."""
    for m in re.finditer(r"@\s*[A-Za-z]+\s*[{(]\s*" + re.escape(key) + r"\s*,", text):
        entry = parse_entry(text, key, m.start())
        if entry is not None and text.rfind("@", 0, entry.type_span[0]) == m.start():
            return m.start(), entry.close + 1
    return None


def update_text(text: str, updates: Mapping[str, Published]) -> tuple[str, list[str]]:
    """``text`` (a whole .bib) with the first entry of each key in ``updates`` rewritten as its published version
    (:func:`updated_entry`) and every other byte kept; and the keys updated."""
    spans = sorted(((span, key) for key in updates if (span := entry_span(text, key)) is not None), reverse=True)
    done: list[str] = []
    for (start, end), key in spans:
        text = text[:start] + updated_entry(text[start:end], updates[key], key) + text[end:]
        done.append(key)
    return text, sorted(done, key=list(updates).index)


def keys_in(text: str) -> Iterable[str]:
    """Every entry key of ``text``, in order."""
    for m in re.finditer(r"@\s*([A-Za-z]+)\s*[{(]\s*([^,\s]+)\s*,", text):
        if m.group(1).lower() not in ("string", "preamble", "comment"):
            yield m.group(2)
