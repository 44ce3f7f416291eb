"""What CiteFinder wrote, remembered beside it in ``.citefinder-written.json``: per file its bytes' hash, the
draft it was written for and the cite commands CiteFinder put into it (key and the text around it).

Two readers: the safe writer (:mod:`citefinder.text.safewrite`) replaces an existing output only when it is
still the file CiteFinder wrote for this draft; learning skips a cite CiteFinder put there itself (a re-fill
or a check of a filled draft learns nothing the user did not choose).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def cites_written(paths: Iterable[Path]) -> set[Cite]:
    """Every cite CiteFinder noted writing into any of ``paths``."""
    out: set[Cite] = set()
    for p in paths:
        entry = record(p)
        for c in (entry or {}).get("cites", []):
            if isinstance(c, dict) and isinstance(c.get("key"), str) and isinstance(c.get("before"), str):
                out.add(Cite(c["key"], c["before"]))
    return out


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


def without_written(tex: str, cites: set[Cite]) -> str:
    """``tex`` with every key CiteFinder wrote (a :class:`Cite` noted for its file) turned back into ``?``,
    so that what reads the user's citations does not read CiteFinder's."""
    if not cites:
        return tex
    from citefinder.text.latex import scan_latex

    edits = []
    for cite in scan_latex(tex).cites:
        here = context(tex, cite.start)
        edits += [(k.start, k.end) for k in cite.keys if Cite(k.text.strip(), here) in cites]
    out, pos = [], 0
    for start, end in sorted(edits):
        out += [tex[pos:start], "?"]
        pos = end
    out.append(tex[pos:])
    return "".join(out)
