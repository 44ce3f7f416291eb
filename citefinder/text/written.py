"""What CiteFinder wrote, remembered beside it in ``.citefinder-written.json``: per file its bytes' hash, the
draft it was written for and the cite commands CiteFinder put into it (key and the text around it).

Two readers: the safe writer (:mod:`citefinder.text.safewrite`) replaces an existing output only when it is
still the file CiteFinder wrote for this draft; learning skips a cite CiteFinder put there itself (a re-fill
or a check of a filled draft learns nothing the user did not choose), found even after the user edited the
words before it (:func:`owned`). A cite is known in its file's own
coordinates (the file, and that file's text before it), never in a project's inlined text.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citefinder.text.project import Project

log = logging.getLogger(__name__)

MANIFEST = ".citefinder-written.json"
CONTEXT = 60  # characters of the text before the cite command that identify it
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Cite:
    """One cite command CiteFinder wrote: its key and the text just before it (whitespace collapsed)."""

    key: str
    before: str

    @classmethod
    def at(cls, text: str, start: int, key: str) -> Cite:
        return cls(key, context(text, start))


def context(text: str, start: int) -> str:
    """The :data:`CONTEXT` characters before ``start``, whitespace collapsed (line endings do not matter)."""
    return _SPACE.sub(" ", text[max(0, start - 2 * CONTEXT):start])[-CONTEXT:].strip()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load(folder: Path) -> dict[str, Any]:
    try:
        state = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def record(path: Path) -> dict[str, Any] | None:
    entry = _load(path.parent).get("files", {}).get(path.name)
    return entry if isinstance(entry, dict) else None


def is_ours(path: Path, draft: Path | None) -> bool:
    """``path`` holds exactly what CiteFinder last wrote there, for ``draft`` (any draft when None)."""
    entry = record(path)
    if entry is None:
        return False
    try:
        same = entry.get("sha256") == _sha(path.read_bytes())
    except OSError:
        return False
    return same and (draft is None or entry.get("draft") in (None, str(draft)))


def records(entries: Iterable[tuple[Path, bytes, Path | None, Sequence[Cite]]]) -> dict[Path, bytes]:
    """The record files that note ``entries`` (path, bytes written, draft, cites): each folder's
    ``.citefinder-written.json`` -> its new bytes. Written by the safe writer in the same all-or-nothing
    step as the files themselves (a file whose record is missing would be learned from as the user's)."""
    states: dict[Path, dict[str, Any]] = {}
    for path, data, draft, cites in entries:
        state = states.setdefault(path.parent, _load(path.parent))
        remember(state, path, data, draft, cites)
    return {folder / MANIFEST: json.dumps(state, indent=1, ensure_ascii=False).encode("utf-8")
            for folder, state in states.items()}


def remember(state: dict[str, Any], path: Path, data: bytes, draft: Path | None, cites: Sequence[Cite]) -> None:
    """Note in ``state`` (a folder's record) that ``data`` was written to ``path`` for ``draft`` with ``cites``
    (added to those noted before)."""
    files = state.setdefault("files", {})
    if not isinstance(files, dict):
        files = state["files"] = {}
    found = files.get(path.name)
    earlier: dict[str, Any] = found if isinstance(found, dict) else {}
    known = [Cite(c["key"], c["before"]) for c in earlier.get("cites", []) if isinstance(c, dict)
             and isinstance(c.get("key"), str) and isinstance(c.get("before"), str)]
    merged = list(dict.fromkeys([*known, *cites]))
    files[path.name] = {"sha256": _sha(data), "draft": str(draft) if draft else None,
                        "cites": [{"key": c.key, "before": c.before} for c in merged]}


@dataclass(frozen=True)
class WrittenCites:
    """The cites CiteFinder noted writing, per file, each known in that file's own coordinates: its key and the
    file's own text just before it (never the text of a project with its includes inlined, where the text before
    a cite at the start of an included file, or just after an ``\\input`` line, is another file's)."""

    by_file: Mapping[Path, frozenset[Cite]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(self.by_file.values())

    def of(self, path: Path) -> frozenset[Cite]:
        return self.by_file.get(path, frozenset())

    _owned: dict[tuple[Path, int], tuple[str, frozenset[tuple[int, str]]]] = field(
        default_factory=dict, compare=False, repr=False)  # per file: its text and the cites owned in it (a cache)

    def holds(self, path: Path, text: str, start: int, key: str) -> bool:
        """CiteFinder wrote ``key`` into the cite command at ``start`` of ``text``, the text of file ``path``, or
        may have (:func:`owned`: an edit near it does not make it the user's)."""
        cites = self.of(path)
        if not cites:
            return False
        known = self._owned.get((path, hash(text)))
        if known is None or known[0] != text:
            known = self._owned[(path, hash(text))] = (text, owned(cites, text))
        return (start, key) in known[1]

    def in_project(self, project: Project, pos: int, key: str) -> bool:
        """CiteFinder wrote ``key`` into the cite command at ``pos`` of ``project.text`` (read in its own file)."""
        if not self:
            return False
        i, at = project.locate(pos)
        return self.holds(project.files[i].path, project.files[i].text, at, key)


def owned(cites: Iterable[Cite], text: str) -> frozenset[tuple[int, str]]:
    """(start, key) of every cite command of ``text`` (a file's own text) that holds a key CiteFinder noted
    writing there (``cites``), or may hold it: what is not learned as the user's choice.

    The text a cite was noted with (:data:`CONTEXT` characters before it) changes when the user edits a few
    words before it, so a cite is not found by that text alone. Per key: the file's cite commands holding it are
    CiteFinder's when their text before is the noted one; of the others, as many as CiteFinder noted are its own,
    the ones whose text before is most like a noted one (:class:`difflib.SequenceMatcher`); only a command beyond
    that count (the user cited the key again elsewhere) is the user's. When the file holds no more of the key
    than CiteFinder wrote, every one is taken for CiteFinder's: unsure, nothing is learned."""
    import difflib

    from citefinder.text.latex import scan_latex

    noted: dict[str, list[str]] = {}
    for c in cites:
        noted.setdefault(c.key, []).append(c.before)
    if not noted:
        return frozenset()
    present: dict[str, list[tuple[int, str]]] = {}
    for command in scan_latex(text).cites:
        for key in dict.fromkeys(command.cited):
            if key in noted:
                present.setdefault(key, []).append((command.start, context(text, command.start)))
    out: set[tuple[int, str]] = set()
    for key, here in present.items():
        left = list(noted[key])
        rest = []
        for start, before in here:  # the noted text exactly: CiteFinder's
            if before in left:
                left.remove(before)
                out.add((start, key))
            else:
                rest.append((start, before))
        if len(rest) <= len(left):
            out.update((start, key) for start, _ in rest)
            continue
        pairs = sorted(((difflib.SequenceMatcher(a=before, b=theirs, autojunk=False).ratio(), i, j)
                        for i, (_, before) in enumerate(rest) for j, theirs in enumerate(left)), reverse=True)
        used_i: set[int] = set()
        used_j: set[int] = set()
        for _, i, j in pairs:
            if i not in used_i and j not in used_j:
                used_i.add(i)
                used_j.add(j)
                out.add((rest[i][0], key))
    return frozenset(out)


def cites_written(paths: Iterable[Path]) -> WrittenCites:
    """Every cite CiteFinder noted writing into any of ``paths`` (a project's: its files), by file."""
    out: dict[Path, frozenset[Cite]] = {}
    for p in paths:
        entry = record(p)
        cites = {Cite(c["key"], c["before"]) for c in (entry or {}).get("cites", [])
                 if isinstance(c, dict) and isinstance(c.get("key"), str) and isinstance(c.get("before"), str)}
        if cites:
            out[p] = frozenset(cites)
    return WrittenCites(out)


def new_cites(original: str, filled: str) -> list[Cite]:
    """The keys ``filled`` cites that ``original`` did not, at their cite commands (a fill changes only
    placeholders: the cites of ``original`` come back in order in ``filled``, some with keys added)."""
    from citefinder.text.latex import scan_latex

    before = [c for c in scan_latex(original).cites if c.cited]
    out: list[Cite] = []
    j = 0
    for cite in scan_latex(filled).cites:
        keys = cite.cited
        if not keys:
            continue
        if j < len(before) and before[j].command == cite.command and set(before[j].cited) <= set(keys):
            old = set(before[j].cited)
            j += 1
        else:
            old = set()
        out += [Cite.at(filled, cite.start, k) for k in keys if k not in old]
    return out


def carried_cites(original: str, changed: str, ours: frozenset[Cite]) -> list[Cite]:
    """The cites CiteFinder had written into ``original`` (``ours``: noted for its file) that ``changed`` (the
    same file with keys filled, replaced or includes renamed) still holds, each at its place in ``changed``: a
    copy of a filled file, or a file filled again, stays CiteFinder's where CiteFinder wrote it. Cite commands
    are paired in order (:class:`difflib.SequenceMatcher` over commands and keys, an edited command paired with
    the next one of the same name sharing a key)."""
    if not ours:
        return []
    import difflib

    from citefinder.text.latex import scan_latex

    old, new = list(scan_latex(original).cites), list(scan_latex(changed).cites)
    theirs = owned(ours, original)
    tokens = [[(c.command, tuple(c.cited)) for c in side] for side in (old, new)]
    out: list[Cite] = []
    matcher = difflib.SequenceMatcher(a=tokens[0], b=tokens[1], autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag not in ("equal", "replace"):
            continue
        a = a0
        for b in range(b0, b1):
            at = next((i for i in range(a, a1) if old[i].command == new[b].command
                       and set(old[i].cited) & set(new[b].cited)), None)
            if at is None:
                continue
            mine = {k for k in old[at].cited if (old[at].start, k) in theirs}
            out += [Cite.at(changed, new[b].start, k) for k in new[b].cited if k in mine]
            a = at + 1
    return list(dict.fromkeys(out))


def without_written(project: Project, written: WrittenCites) -> str:
    """``project.text`` with every key CiteFinder wrote (noted for the file it is in, at its place in that file)
    turned back into ``?``, so that what reads the user's citations does not read CiteFinder's."""
    text = project.text
    if not written:
        return text
    from citefinder.text.latex import scan_latex

    edits = [(k.start, k.end) for cite in scan_latex(text).cites for k in cite.keys
             if k.text.strip() and written.in_project(project, cite.start, k.text.strip())]
    out, pos = [], 0
    for start, end in sorted(edits):
        out += [text[pos:start], "?"]
        pos = end
    out.append(text[pos:])
    return "".join(out)
