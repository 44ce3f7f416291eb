"""Where the import of a dump stopped, per source file, so that the next run resumes there.

The library folder holds ``dump-progress.json``: for each dump file (by its absolute path) its size and
modification time when it was read, its format and filters, the record (line) and byte offset up to which
every record is settled (stored, a duplicate of a stored paper, filtered out or failed), and whether the
whole file is. It is replaced atomically (:func:`citefinder.text.safewrite.atomic_write`) as the import
goes, and once more when it stops (Ctrl-C, a full disk) or ends.

What counts as settled is read from the library itself, not from the import's batches: the import writes
papers in batches, in order (:meth:`~citefinder.library.store.writes.LibraryWrites.add_papers`), so once a paper read
in this run is found stored *as itself* (:meth:`~citefinder.library.store.writes.LibraryWrites.match` gives its own
doc id back, the identity rule over the stored papers' keys), every record before it has been dealt with:
stored, skipped as a duplicate, or failed. Papers the library already matches when they are read are
duplicates, settled at once; the others are kept (a title, ids, year, first author; no abstract) until a paper
at or after them is found stored (:meth:`Tracker.advance`). A resumed import therefore reads again at most the
batches that were not yet written.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Protocol

from citefinder.library.formats.lines import Position, source_name
from citefinder.text.safewrite import atomic_write
from citefinder.types import Paper

log = logging.getLogger(__name__)

FILE = "dump-progress.json"


class Matcher(Protocol):
    def match(self, paper: Paper) -> str | None: ...


@dataclass(frozen=True)
class FileMark:
    """One dump file's progress: what it was (size, mtime, format, filters) and how far it is settled."""

    size: int
    mtime_ns: int
    format: str
    filters: str
    record: int = 0
    offset: int = 0
    done: bool = False


class ProgressBook:
    """``dump-progress.json`` of a library folder: read once, changed per file, saved atomically."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FILE
        self.marks: dict[str, FileMark] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.marks = {k: FileMark(**v) for k, v in data.get("files", {}).items()}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as e:
            log.warning("%s is unreadable (%s): dumps are read from their start", self.path, e)

    def start(self, path: Path, fmt: str, filters: str, *, restart: bool = False) -> tuple[FileMark, str | None]:
        """Where to start reading ``path`` (a mark with ``done`` when it was read whole) and a sentence saying
        why, when it does not start at the beginning or its old progress is dropped."""
        st = path.stat()
        fresh = FileMark(st.st_size, st.st_mtime_ns, fmt, filters)
        key, name = str(path.resolve()), source_name(path)
        old = self.marks.get(key)
        note = None
        if old is not None and not restart:
            if (old.size, old.mtime_ns) != (fresh.size, fresh.mtime_ns):
                note = f"{name} changed since it was last read: reading it from the start"
            elif (old.format, old.filters) != (fmt, filters):
                note = (f"{name} was read with other options ({old.format}, {old.filters}): "
                        "reading it from the start")
            elif old.done:
                return old, f"{name} was imported whole before: skipped (--restart reads it again)"
            elif old.record:
                return old, f"resuming at record {old.record + 1:,} of {name}"
        self.marks[key] = fresh
        return fresh, note

    def settle(self, path: Path, at: Position, *, done: bool = False) -> None:
        key = str(path.resolve())
        self.marks[key] = replace(self.marks[key], record=at.record, offset=at.offset, done=done)

    def save(self) -> None:
        data = {"version": 1, "files": {k: asdict(v) for k, v in self.marks.items()}}
        atomic_write(self.path, json.dumps(data, indent=1).encode("utf-8"))


@dataclass(frozen=True)
class _Read:
    file: int  # index of the file in the run
    before: Position  # the place just before this paper's record
    paper: Paper  # slim: what the identity rule reads
    witness: bool  # found stored as itself, it proves every record before it dealt with (no earlier one has its id)


def _slim(paper: Paper) -> Paper:
    return Paper(doc_id=paper.doc_id, title=paper.title, authors=paper.authors[:1], year=paper.year, doi=paper.doi,
                 arxiv_id=paper.arxiv_id)


class Tracker:
    """The papers an import has read but not yet settled, and the settled place of each file (see the module
    docstring). ``read`` every record before it is handed on, ``advance`` from time to time and when the import
    stops, ``finish`` when it ended."""

    def __init__(self, library: Matcher, book: ProgressBook, files: list[Path]) -> None:
        self.library = library
        self.book = book
        self.files = files
        self.unsettled: deque[_Read] = deque()
        self._ids: dict[str, int] = {}  # doc id -> how many unsettled papers have it
        self.last: tuple[int, Position] | None = None  # the place after the last record read
        self.ends: dict[int, Position] = {}  # the place after the last record read of each file

    def read(self, file: int, before: Position, after: Position, paper: Paper | None) -> None:
        """A record is handed on: a paper, or None (filtered out or failed: settled as it is read). A paper the
        library already matches is a duplicate, settled too."""
        if paper is not None and self.library.match(paper) is None:
            slim = _slim(paper)
            self.unsettled.append(_Read(file, before, slim, witness=slim.doc_id not in self._ids))
            self._ids[slim.doc_id] = self._ids.get(slim.doc_id, 0) + 1
        self.last = (file, after)
        self.ends[file] = after

    def advance(self) -> None:
        """Settle every record up to the last paper found stored as itself, and save the places."""
        q = self.unsettled
        last = next((j for j in range(len(q) - 1, -1, -1)
                     if q[j].witness and self.library.match(q[j].paper) == q[j].paper.doc_id), None)
        for _ in range(0 if last is None else last + 1):
            doc_id = q.popleft().paper.doc_id
            self._ids[doc_id] -= 1
            if not self._ids[doc_id]:
                del self._ids[doc_id]
        if q:
            self._settle(q[0].file, q[0].before)
        elif self.last is not None:
            self._settle(*self.last)
        self.book.save()

    def _settle(self, file: int, at: Position) -> None:
        for i in range(file):  # files before this one were read whole
            if i in self.ends and not self.book.marks[str(self.files[i].resolve())].done:
                self.book.settle(self.files[i], self.ends[i], done=True)
        self.book.settle(self.files[file], at)

    def finish(self) -> None:
        """The import ended: every file read is settled whole."""
        for i, f in enumerate(self.files):
            key = str(f.resolve())
            mark = self.book.marks[key]
            end = self.ends.get(i, Position(mark.record, mark.offset))
            self.book.marks[key] = replace(mark, done=True, record=end.record, offset=end.offset)
        self.unsettled.clear()
        self._ids.clear()
        self.book.save()

    def resume_point(self) -> tuple[Path, int] | None:
        """(file, record number) the next run starts at, or None when nothing is left."""
        for f in self.files:
            mark = self.book.marks.get(str(f.resolve()))
            if mark is None:  # not reached yet
                return f, 1
            if not mark.done:
                return f, mark.record + 1
        return None
