"""One .bib entry's fields where the text has them, to change some and keep every other byte: the entry type,
each field's name and value span (braces, quotes, bare words, ``#`` concatenations), and the closing brace
(:mod:`citefinder.library.bibupdate` rewrites a preprint's entry with them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEAD = re.compile(r"@\s*([A-Za-z]+)\s*[{(]\s*")
_NAME = re.compile(r"\s*,?\s*([A-Za-z][\w:.+-]*)\s*=\s*", re.ASCII)


@dataclass(frozen=True)
class Field:
    """A field of an entry: its name as written, its value as written (``raw``), without outer braces (``plain``),
    and its span in the entry text (from the name to the end of the value)."""

    name: str
    raw: str
    start: int
    end: int

    @property
    def plain(self) -> str:
        v = self.raw.strip()
        if len(v) >= 2 and (v[0], v[-1]) in (("{", "}"), ('"', '"')):
            v = v[1:-1]
        return " ".join(v.replace("{", "").replace("}", "").split())


@dataclass(frozen=True)
class Entry:
    """An entry's text: its type (``type_span`` in the text), key, fields, and where its closing brace is."""

    text: str
    type_span: tuple[int, int]
    key: str
    fields: tuple[Field, ...]
    close: int

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name.lower() == name), None)


def _value_end(text: str, i: int) -> int:
    """Where the value starting at ``i`` ends (a ``#`` concatenation of braced, quoted and bare parts)."""
    n = len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == "{":
            depth = 0
            while i < n:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
                if depth == 0:
                    break
        elif i < n and text[i] == '"':
            i, depth = i + 1, 0
            while i < n and not (text[i] == '"' and depth == 0):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            i += 1
        else:
            while i < n and text[i] not in ",}#)\n" and not text[i].isspace():
                i += 1
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j < n and text[j] == "#":
            i = j + 1
            continue
        return i


def parse_entry(text: str, key: str | None = None, start: int = 0) -> Entry | None:
    """The entry at ``start`` of ``text`` (the first ``@type{`` from there; ``key``: that key's), or None."""
    for m in _HEAD.finditer(text, start):
        if m.group(1).lower() in ("string", "preamble", "comment"):
            continue
        k = re.match(r"([^,\s]*)\s*,", text[m.end():])
        if k is None or (key is not None and k.group(1) != key):
            continue
        i = m.end() + k.end()
        fields: list[Field] = []
        while True:
            nm = _NAME.match(text, i)
            if nm is None:
                break
            end = _value_end(text, nm.end())
            fields.append(Field(nm.group(1), text[nm.end():end], nm.start(1), end))
            i = end
        close = re.match(r"\s*,?\s*[})]", text[i:])
        if close is None:
            return None
        return Entry(text, m.span(1), k.group(1), tuple(fields), i + close.end() - 1)
    return None
