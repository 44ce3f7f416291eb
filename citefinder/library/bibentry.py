"""A paper's own BibTeX text (:attr:`Paper.bibtex`): kept at import exactly as the user's file has it, and
changed only where the user asks (a new key, an edited field), so an export gives back their entry.

The stored text is the entry itself, preceded by the ``@string`` definitions its fields use and followed
by the ``crossref`` parent it inherits from: each block byte for byte as in the file, so an export
of the entry alone still compiles. Pure text functions; bibtexparser only to split blocks apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from citefinder.types import Paper

_HEAD = re.compile(r"@\s*(?P<type>[A-Za-z]+)\s*(?P<open>[{(])\s*(?P<key>[^,\s{}]*)")
_MACRO = re.compile(r"""(?:=|#)\s*([^\d\s"#%'(),={}][^\s"#%'(),={}]*)""")
_FIELD_NAME = re.compile(r"\s*([A-Za-z][\w\-:.+]*)\s*=\s*")
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class EntryParts:
    """A stored text split into its blocks: the ``@string`` definitions, the entry, its crossref parents."""

    strings: tuple[str, ...]
    entry: str
    parents: tuple[str, ...] = ()


def macros_used(entry_raw: str, defined: Mapping[str, str]) -> list[str]:
    """The names of ``defined`` (lower-cased ``@string`` names -> raw block) that ``entry_raw`` refers to
    (``journal = pami``, ``"a" # pami``), with the strings those definitions use in turn, in file order."""
    seen: list[str] = []
    todo = [m.lower() for m in _MACRO.findall(entry_raw)]
    while todo:
        name = todo.pop(0)
        if name in defined and name not in seen:
            seen.append(name)
            todo += [m.lower() for m in _MACRO.findall(defined[name].split("=", 1)[-1])]
    order = list(defined)
    return sorted(seen, key=order.index)


def stored_text(strings: Sequence[str], entry: str, parents: Sequence[str] = ()) -> str:
    """What :attr:`Paper.bibtex` holds for an entry read from a file (see the module docstring)."""
    return SEPARATOR.join([*strings, entry, *parents])


def parts(text: str) -> EntryParts:
    """The blocks of a stored text; a text bibtexparser cannot split is taken as one entry."""
    import bibtexparser
    from bibtexparser.model import Entry, String

    strings: list[str] = []
    entries: list[str] = []
    try:
        blocks = bibtexparser.parse_string(text, parse_stack=[]).blocks
    except Exception:  # noqa: BLE001 - an odd text is still the user's: written as it is
        blocks = []
    for block in blocks:
        if isinstance(block, String) and block.raw:
            strings.append(block.raw)
        elif isinstance(block, Entry) and block.raw:
            entries.append(block.raw)
    if not entries:
        return EntryParts((), text.strip())
    return EntryParts(tuple(strings), entries[0], tuple(entries[1:]))


def entry_key(entry: str) -> str | None:
    """The citation key written in an entry's first line, or None."""
    m = _HEAD.search(entry)
    return m.group("key") or None if m else None


def entry_type(entry: str) -> str | None:
    m = _HEAD.search(entry)
    return m.group("type").lower() if m else None


def with_key(entry: str, key: str) -> str:
    """``entry`` under another citation key; every other character is kept."""
    m = _HEAD.search(entry)
    if m is None or m.group("key") == key:
        return entry
    return f"{entry[: m.start('key')]}{key}{entry[m.end('key'):]}"


def crossref_of(entry: str) -> str | None:
    """The key an entry's ``crossref`` field names, or None."""
    span = field_spans(entry).get("crossref")
    if span is None:
        return None
    return entry[span[0] : span[1]].strip().strip('{}"').strip() or None


def field_spans(entry: str) -> dict[str, tuple[int, int]]:
    """Field name (lower case) -> the character span of its value in ``entry`` (braces or quotes
    included), for the fields at the entry's top level; later duplicates are ignored."""
    m = _HEAD.search(entry)
    if m is None:
        return {}
    close = "}" if m.group("open") == "{" else ")"
    i = entry.find(",", m.end())
    spans: dict[str, tuple[int, int]] = {}
    while 0 <= i < len(entry):
        name = _FIELD_NAME.match(entry, i + 1)
        if name is None:
            break
        start = name.end()
        end = _value_end(entry, start, close)
        spans.setdefault(name.group(1).lower(), (start, end))
        i = end if end < len(entry) and entry[end] == "," else -1
    return spans


def _value_end(text: str, i: int, close: str) -> int:
    """Where a field value starting at ``i`` ends: at the top-level comma or the entry's closing delimiter."""
    depth, quoted = 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                break
            depth -= 1
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif depth == 0 and not quoted and (c == "," or c == close):
            break
        i += 1
    end = i
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def set_fields(entry: str, values: Mapping[str, str | None]) -> str:
    """``entry`` with the given fields' values replaced (braced), added before its end, or removed
    (None); every other character is kept."""
    out = entry
    for name, value in values.items():
        spans = field_spans(out)
        span = spans.get(name.lower())
        if span is not None and value is None:
            out = _remove_field(out, span)
        elif span is not None:
            out = f"{out[: span[0]]}{{{value}}}{out[span[1]:]}"
        elif value is not None:
            out = _append_field(out, name, value, spans)
    return out


def _remove_field(entry: str, span: tuple[int, int]) -> str:
    """Without the field whose value is at ``span``: from the comma before its name to its value's end."""
    comma = entry.rfind(",", 0, span[0])
    return entry[:comma] + entry[span[1]:] if comma >= 0 else entry


def _append_field(entry: str, name: str, value: str, spans: Mapping[str, tuple[int, int]]) -> str:
    """A new field after the last one, indented like the first one."""
    closing = re.search(r"\s*[})]\s*$", entry)
    body, tail = (entry[: closing.start()], entry[closing.start():]) if closing else (entry, "")
    indent = "  "
    if spans:
        first = min(s for s, _ in spans.values())
        lead = re.match(r"[ \t]*", entry[entry.rfind("\n", 0, first) + 1:])
        indent = lead.group(0) if lead and lead.group(0) else indent
    body = body.rstrip()
    comma = "" if body.endswith(",") else ","
    tail = tail if tail.startswith("\n") else "\n" + tail.lstrip()
    return f"{body}{comma}\n{indent}{name} = {{{value}}}{tail}"


def join_export(items: Iterable[EntryParts]) -> str:
    """One .bib text from entries: each ``@string`` once at the top, then the entries in the given order,
    then crossref parents (BibTeX wants them after the entries that use them), each once."""
    strings: list[str] = []
    entries: list[str] = []
    parents: list[str] = []
    for p in items:
        strings += [s for s in p.strings if s not in strings]
        entries.append(p.entry)
        parents += [e for e in p.parents if e not in parents]
    own = {entry_key(e) for e in entries}
    late = [e for e in entries if entry_key(e) in {entry_key(p) for p in parents}]
    entries = [e for e in entries if e not in late]
    parents = late + [p for p in parents if entry_key(p) not in own]
    blocks = strings + entries + parents
    return SEPARATOR.join(b.strip("\n") for b in blocks) + "\n" if blocks else ""


def from_bib(paper: Paper) -> bool:
    """Whether ``paper``'s entry text is a .bib file's own (not one written for a CSL-JSON, JSONL or PDF record)."""
    return bool(paper.bibtex) and (paper.source or "").lower().endswith(".bib")


def adopted(stored: Paper, duplicate: Paper) -> Paper:
    """``stored`` with the key (and, from a .bib, the entry text, its place and file) of ``duplicate``. The
    user's .bib entry wins whatever the order of imports: a stored entry from a .bib (not the sample's) keeps
    its key and text when the same work arrives from CSL-JSON, JSONL or a PDF; a .bib entry arriving later
    becomes the entry of a work stored from elsewhere. (A sample paper's entry is nobody's:
    :func:`citefinder.library.sample_file.owned` hands it over without its file.)"""
    if from_bib(duplicate) or (duplicate.bibtex and not from_bib(stored)):
        return replace(stored, key=duplicate.key or stored.key, bibtex=duplicate.bibtex, position=duplicate.position,
                       source=duplicate.source)
    if not duplicate.key or from_bib(stored):
        return stored
    text = with_key(stored.bibtex, duplicate.key) if stored.bibtex else None
    return replace(stored, key=duplicate.key, bibtex=text)
