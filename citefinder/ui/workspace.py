"""The last draft per library, kept on disk so work survives reloads: text, results and the user's picks.

One JSON file, ``<library>/workspace/last-draft.json``, rewritten whole (atomically) on every change
and removed by "start over". Results are :meth:`SlotResult.to_dict` records read back by
:func:`result_from_dict`.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citefinder.types import Candidate, Hit, Paper, Query, Selection, Slot, SlotResult, StageScore, StageTrace

log = logging.getLogger(__name__)

VERSION = 1
FILE = Path("workspace") / "last-draft.json"


@dataclass(frozen=True)
class Draft:
    """What the Cite page holds: the text, its results (possibly partial) and the user's picks."""

    text: str
    source_name: str | None = None
    results: tuple[SlotResult, ...] = ()
    choices: dict[int, str | None] = field(default_factory=dict)  # slot index -> doc_id (None = leave empty)
    extra_papers: dict[str, Paper] = field(default_factory=dict)  # picked from a library search, not a candidate
    elapsed_s: float = 0.0
    saved_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "saved_at": self.saved_at or time.time(),
            "text": self.text,
            "source_name": self.source_name,
            "elapsed_s": self.elapsed_s,
            "results": [r.to_dict() for r in self.results],
            "choices": {str(k): v for k, v in self.choices.items()},
            "extra_papers": {k: p.to_dict() for k, p in self.extra_papers.items()},
        }


def draft_path(library_folder: str | Path) -> Path:
    return Path(library_folder).expanduser() / FILE


def save_draft(library_folder: str | Path, draft: Draft) -> Path:
    """Write ``draft`` for this library (atomically); returns the file's path."""
    path = draft_path(library_folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(draft.to_dict(), ensure_ascii=False)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".last-draft-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load_draft(library_folder: str | Path) -> Draft | None:
    """The saved draft of this library, or None (none saved, or unreadable: logged and ignored)."""
    path = draft_path(library_folder)
    if not path.exists():
        return None
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        return Draft(
            text=str(d.get("text") or ""),
            source_name=d.get("source_name"),
            results=tuple(result_from_dict(r) for r in d.get("results") or ()),
            choices={int(k): v for k, v in (d.get("choices") or {}).items()},
            extra_papers={k: Paper.from_dict(p) for k, p in (d.get("extra_papers") or {}).items()},
            elapsed_s=float(d.get("elapsed_s") or 0.0),
            saved_at=float(d.get("saved_at") or 0.0),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("ignoring the saved draft %s: %s", path, e)
        return None


def clear_draft(library_folder: str | Path) -> None:
    draft_path(library_folder).unlink(missing_ok=True)


def result_from_dict(d: dict[str, Any]) -> SlotResult:
    """The inverse of :meth:`SlotResult.to_dict`."""
    slot = Slot(**d["slot"]) if d.get("slot") else None
    q = d.get("query") or {}
    query = Query(q.get("text", ""), tuple(q.get("keywords") or ()), tuple(q.get("variants") or ()))
    candidates = tuple(
        Candidate(Paper.from_dict(c["paper"]), tuple(StageScore(**s) for s in c.get("scores") or ()))
        for c in d.get("candidates") or ()
    )
    s = d.get("selection") or {}
    selection = Selection(
        s.get("status", "not_found"),
        Paper.from_dict(s["paper"]) if s.get("paper") else None,
        float(s.get("confidence") or 0.0),
        s.get("method", ""),
        s.get("reasoning", ""),
    )
    traces = tuple(
        StageTrace(
            agent=t["agent"], status=t.get("status", "ok"), kind=t.get("kind", "stage"), message=t.get("message", ""),
            inputs=dict(t.get("inputs") or {}), params=dict(t.get("params") or {}),
            top=tuple(Hit(**h) for h in t.get("top") or ()), elapsed_s=float(t.get("elapsed_s") or 0.0),
            details=dict(t.get("details") or {}),
        )
        for t in d.get("traces") or ()
    )
    return SlotResult(slot, query, candidates, selection, traces)
