"""The user's drafts per library, kept on disk so work survives reloads: text, results, the user's picks
(several papers per slot, picks set aside by an edit, their undo history) and the .bib the draft was paired with.

One JSON file per draft, ``<library>/workspace/drafts/<draft id>.json``, keyed by the draft (not "the last"):
two tabs on one library each write their own draft, and a draft's picks are never shown on another. Each file
is rewritten whole through the safe writer (:func:`citefinder.text.safewrite.atomic_write`). A file that
cannot be read is never overwritten: it is moved aside as ``<id>.json.unreadable`` (:func:`unreadable`
lists them, the page says so). "Start over" moves a draft into ``workspace/cleared/`` (:func:`discard_draft`),
beside every draft cleared before it: *Bring back* restores the one cleared last (:func:`restore_previous`),
then the one before it, and none is ever replaced. The one file of earlier versions
(``last-draft.json``) is read as a draft of its own. Results are :meth:`SlotResult.to_dict` records read back
by :func:`result_from_dict`; files written by version 1 (one doc_id per slot) are read as they were.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, TypeVar

from citefinder.text.safewrite import atomic_write
from citefinder.types import Candidate, Hit, Paper, Query, Selection, Slot, SlotResult, StageScore, StageTrace
from citefinder.ui.picks import Picks, SetAside, as_ids, picks_from_json, picks_to_json

log = logging.getLogger(__name__)

VERSION = 3
DRAFTS = Path("workspace") / "drafts"
FILE = Path("workspace") / "last-draft.json"  # versions 1 and 2: one draft per library
PREVIOUS = Path("workspace") / "previous-draft.json"  # versions before 4: the one draft "start over" put aside
CLEARED = Path("workspace") / "cleared"  # every draft "start over" put aside, named by when (oldest first)
UNREADABLE = ".unreadable"
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def new_draft_id() -> str:
    """A fresh draft's identity: when it began, and a random part (two drafts begun at once differ)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:8]


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
    draft_id: str = ""  # the draft's identity: its file, and what its picks belong to

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "draft_id": self.draft_id,
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

    @property
    def title(self) -> str:
        """How the page names the draft: its file's name, else its first words."""
        words = " ".join(self.text.split()[:8])
        return self.source_name or (words[:60] + ("…" if len(words) > 60 else "")) or "(empty draft)"


def _folder(library_folder: str | Path) -> Path:
    return Path(library_folder).expanduser()


def draft_path(library_folder: str | Path, draft_id: str | None = None) -> Path:
    """The file of draft ``draft_id`` (without one: the draft saved last, else ``drafts/default.json``)."""
    if draft_id is None:
        latest = _latest(library_folder)
        draft_id = latest[0] if latest else "default"
    if not _ID.match(draft_id):
        raise ValueError(f"not a draft id: {draft_id!r}")
    return _folder(library_folder) / DRAFTS / f"{draft_id}.json"


def save_draft(library_folder: str | Path, draft: Draft) -> Path:
    """Write ``draft`` as its own file for this library (atomically); returns the file's path."""
    path = draft_path(library_folder, draft.draft_id or "default")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and _summary_of(path) is None:  # never write over a record that could not be read
        _move_aside(path)
    atomic_write(path, json.dumps(draft.to_dict(), ensure_ascii=False).encode("utf-8"))
    return path


def _migrate(library_folder: str | Path) -> None:
    """The one draft of versions 1 and 2 becomes a draft of its own (``drafts/last-draft.json``)."""
    legacy = _folder(library_folder) / FILE
    if legacy.exists():
        target = _folder(library_folder) / DRAFTS / "last-draft.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.replace(legacy, target)


def _read(path: Path) -> Draft | None:
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
            draft_id=path.stem if path.parent.name == DRAFTS.name else str(d.get("draft_id") or ""),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        log.warning("the saved draft %s cannot be read: %s", path, e)
        return None


def _move_aside(path: Path) -> Path:
    """Keep an unreadable record as ``NAME.unreadable`` (``.unreadable.1`` ... never over an older one)."""
    target = path.with_name(path.name + UNREADABLE)
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}{UNREADABLE}.{n}")
        n += 1
    os.replace(path, target)
    log.warning("moved the unreadable draft %s aside to %s", path, target)
    return target


def list_drafts(library_folder: str | Path) -> list[Draft]:
    """This library's saved drafts, the one saved last first (an unreadable one is moved aside, see
    :func:`unreadable`)."""
    return _readable(library_folder, _read)


@dataclass(frozen=True)
class DraftSummary:
    """What the page lists of a saved draft (read once per version of its file)."""

    draft_id: str
    title: str
    saved_at: float
    slots: int
    picks: int


@lru_cache(maxsize=256)
def _summary(path: str, mtime_ns: int, size: int) -> DraftSummary | None:
    """A draft file's summary, or None when it cannot be read (cached by the file's version: a rerun of the
    page reads no draft again)."""
    draft = _read(Path(path))
    if draft is None:
        return None
    return DraftSummary(draft.draft_id, draft.title, draft.saved_at, len(draft.results),
                        sum(1 for ids in draft.choices.values() if ids))


def _summary_of(path: Path) -> DraftSummary | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return _summary(str(path), st.st_mtime_ns, st.st_size)


def summaries(library_folder: str | Path, *, but: str | None = None) -> list[DraftSummary]:
    """The saved drafts of this library (``but`` that one), the one saved last first, without reading any file
    twice (an unreadable one is moved aside, see :func:`unreadable`)."""
    return _readable(library_folder, _summary_of, but=but)


_Saved = TypeVar("_Saved", Draft, DraftSummary)


def _readable(library_folder: str | Path, read: Callable[[Path], _Saved | None], *,
              but: str | None = None) -> list[_Saved]:
    """Each draft file of the library as ``read`` gives it (``but`` that one), the one saved last first; a file
    ``read`` cannot read is moved aside (see :func:`unreadable`)."""
    _migrate(library_folder)
    folder = _folder(library_folder) / DRAFTS
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        if path.stem == but:
            continue
        item = read(path)
        if item is None:
            _move_aside(path)
        else:
            found.append(item)
    return sorted(found, key=lambda d: d.saved_at, reverse=True)


def _latest(library_folder: str | Path) -> tuple[str, Draft] | None:
    drafts = list_drafts(library_folder)
    return (drafts[0].draft_id, drafts[0]) if drafts else None


def unreadable(library_folder: str | Path) -> list[Path]:
    """The draft records that could not be read, kept aside (never overwritten, never deleted)."""
    folder = _folder(library_folder) / DRAFTS
    return sorted(folder.glob(f"*{UNREADABLE}*")) if folder.is_dir() else []


def load_draft(library_folder: str | Path, draft_id: str | None = None, *, previous: bool = False) -> Draft | None:
    """Draft ``draft_id`` of this library (without one: the one saved last; ``previous``: the one "start over"
    put aside), or None (none saved; one that cannot be read is moved aside and said by :func:`unreadable`)."""
    if previous:
        cleared = _cleared(library_folder)
        return _read(cleared[-1]) if cleared else None
    if draft_id is None:
        latest = _latest(library_folder)
        return latest[1] if latest else None
    _migrate(library_folder)
    path = draft_path(library_folder, draft_id)
    if not path.exists():
        return None
    draft = _read(path)
    if draft is None:
        _move_aside(path)
    return draft


def clear_draft(library_folder: str | Path, draft_id: str | None = None) -> None:
    """Delete draft ``draft_id`` (without one: every saved draft of this library)."""
    if draft_id is not None:
        draft_path(library_folder, draft_id).unlink(missing_ok=True)
        return
    (_folder(library_folder) / FILE).unlink(missing_ok=True)
    folder = _folder(library_folder) / DRAFTS
    for path in folder.glob("*.json") if folder.is_dir() else ():
        path.unlink(missing_ok=True)


def discard_draft(library_folder: str | Path, draft_id: str | None = None) -> bool:
    """Put draft ``draft_id`` (without one: the one saved last) aside ("start over"), beside every draft put aside
    before it (none is replaced), so :func:`restore_previous` can bring it back. False when there was none."""
    if draft_id is None:
        latest = _latest(library_folder)
        if latest is None:
            return False
        draft_id = latest[0]
    path = draft_path(library_folder, draft_id)
    if not path.exists():
        return False
    _put_aside(library_folder, path, draft_id)
    return True


def _put_aside(library_folder: str | Path, path: Path, name: str, when_ns: int | None = None) -> Path:
    folder = _folder(library_folder) / CLEARED
    folder.mkdir(parents=True, exist_ok=True)
    when = when_ns if when_ns is not None else time.time_ns()
    target = folder / f"{when:020d}-{name}.json"
    while target.exists():  # two drafts cleared within one clock tick
        when += 1
        target = folder / f"{when:020d}-{name}.json"
    os.replace(path, target)
    return target


def _cleared(library_folder: str | Path) -> list[Path]:
    """The drafts "start over" put aside, the one cleared last at the end (the one file of earlier versions,
    ``previous-draft.json``, joins them by its time)."""
    legacy = _folder(library_folder) / PREVIOUS
    if legacy.exists():
        _put_aside(library_folder, legacy, "previous-draft", legacy.stat().st_mtime_ns)
    folder = _folder(library_folder) / CLEARED
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def restore_previous(library_folder: str | Path) -> Draft | None:
    """Bring back the draft "start over" put aside last (it becomes a saved draft again; the one cleared before it
    is next), or None. One that cannot be read is moved aside and the one before it comes back."""
    folder = _folder(library_folder)
    for path in reversed(_cleared(folder)):
        draft = _read(path)
        if draft is None:
            _move_aside(path)
            continue
        if not draft.draft_id or not _ID.match(draft.draft_id) or draft_path(folder, draft.draft_id).exists():
            draft = Draft(**{**draft.__dict__, "draft_id": new_draft_id()})
        target = draft_path(folder, draft.draft_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        return draft
    return None


def has_previous(library_folder: str | Path) -> bool:
    """Whether a draft "start over" put aside can be brought back."""
    return bool(_cleared(library_folder))


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
    literature = tuple(Candidate.from_dict(c) for c in d.get("literature") or ())  # citefinder.pipeline.literature
    return SlotResult(slot, query, candidates, selection, traces, literature)
