"""The last draft per library, kept on disk so work survives reloads: text, results, the user's picks (several
papers per slot, picks set aside by an edit, their undo history) and the .bib the draft was paired with.

One JSON file, ``<library>/workspace/last-draft.json``, rewritten whole (atomically) on every change;
"start over" moves it to ``previous-draft.json`` (:func:`discard_draft`), from where it can be brought
back (:func:`restore_previous`). Results are :meth:`SlotResult.to_dict` records read back by
:func:`result_from_dict`. Files written by version 1 (one doc_id per slot) are read as they were.
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
from citefinder.ui.picks import Picks, SetAside, as_ids, picks_from_json, picks_to_json

log = logging.getLogger(__name__)

VERSION = 2
FILE = Path("workspace") / "last-draft.json"
PREVIOUS = Path("workspace") / "previous-draft.json"


@dataclass(frozen=True)
class Draft:
    """What the Cite page holds: the text, its results (possibly partial) and the user's picks."""

    text: str
    source_name: str | None = None
    results: tuple[SlotResult, ...] = ()
    choices: Picks = field(default_factory=dict)  # slot index -> doc_ids in cite order (() = left empty)
    extra_papers: dict[str, Paper] = field(default_factory=dict)  # picked from a search, or set aside
    elapsed_s: float = 0.0
    saved_at: float = 0.0
    changed: dict[int, SetAside] = field(default_factory=dict)  # slot index -> a pick its edit set aside
    history: tuple[Picks, ...] = ()  # earlier pick states, the last one first to undo
    paired: dict[str, Any] | None = None  # the .bib the results are restricted to (citefinder.ui.paired_bib)
    run_text: str | None = None  # the text the results were found in, when the user has edited it since

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "saved_at": self.saved_at or time.time(),
            "text": self.text,
            "source_name": self.source_name,
            "elapsed_s": self.elapsed_s,
            "results": [r.to_dict() for r in self.results],
            "choices": picks_to_json(self.choices),
            "extra_papers": {k: p.to_dict() for k, p in self.extra_papers.items()},
            "changed": {str(k): v.to_dict() for k, v in self.changed.items()},
            "history": [picks_to_json(h) for h in self.history],
            "paired": self.paired,
            "run_text": self.run_text if self.run_text != self.text else None,
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


def load_draft(library_folder: str | Path, *, previous: bool = False) -> Draft | None:
    """The saved draft of this library (or the one "start over" put aside), or None (none saved, or
    unreadable: logged and ignored)."""
    path = Path(library_folder).expanduser() / PREVIOUS if previous else draft_path(library_folder)
    if not path.exists():
        return None
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        changed = {int(k): SetAside(as_ids(v.get("ids")), str(v.get("sentence") or ""))
                   for k, v in (d.get("changed") or {}).items()}
        return Draft(
            text=str(d.get("text") or ""),
            source_name=d.get("source_name"),
            results=tuple(result_from_dict(r) for r in d.get("results") or ()),
            choices=picks_from_json(d.get("choices") or {}),
            extra_papers={k: Paper.from_dict(p) for k, p in (d.get("extra_papers") or {}).items()},
            elapsed_s=float(d.get("elapsed_s") or 0.0),
            saved_at=float(d.get("saved_at") or 0.0),
            changed=changed,
            history=tuple(picks_from_json(h) for h in d.get("history") or ()),
            paired=d.get("paired") if isinstance(d.get("paired"), dict) else None,
            run_text=d["run_text"] if isinstance(d.get("run_text"), str) else None,
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("ignoring the saved draft %s: %s", path, e)
        return None


def clear_draft(library_folder: str | Path) -> None:
    draft_path(library_folder).unlink(missing_ok=True)


def discard_draft(library_folder: str | Path) -> bool:
    """Put the saved draft aside ("start over"), so :func:`restore_previous` can bring it back; an older
    one put aside is replaced. False when there was none."""
    path = draft_path(library_folder)
    if not path.exists():
        return False
    os.replace(path, Path(library_folder).expanduser() / PREVIOUS)
    return True


def restore_previous(library_folder: str | Path) -> Draft | None:
    """Bring back the draft "start over" put aside (it becomes the saved draft again), or None."""
    folder = Path(library_folder).expanduser()
    draft = load_draft(folder, previous=True)
    if draft is not None:
        os.replace(folder / PREVIOUS, draft_path(folder))
    return draft


def has_previous(library_folder: str | Path) -> bool:
    return (Path(library_folder).expanduser() / PREVIOUS).exists()


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
        tuple(Paper.from_dict(p) for p in s.get("also") or ()),
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
