"""Derived indexes: data an agent builds from the stored papers (title index, names, vectors, ...).

Like the BM25 index, a derived index is never the source of truth: it is built from what the store
holds, saved under ``<library>/indexes/<name>/`` with the library generation it reflects, and
rebuilt whenever that generation changes. An agent that needs one declares an :class:`IndexKind`
and reads it with :func:`derived`; the retrieval registry builds the kinds its agents read after
every write (:func:`citefinder.retrieve.registry.keep_indexes_current`), else they are built on first use.

An index reads its papers through :class:`PaperSource`, a small protocol the library satisfies, so
this layer knows nothing of Chroma, locks or manifests.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, NamedTuple, Protocol, TypeVar

from citefinder.types import Paper

log = logging.getLogger(__name__)

INDEXES_DIR = "indexes"
_STAMP = "stamp.json"


class PaperSource(Protocol):
    """What a derived index is built from: the stored papers, their vectors, and a stamp that changes with them."""

    path: Path

    def generation(self) -> str: ...

    def iter_papers(self) -> Iterator[Paper]: ...

    def iter_vectors(self) -> Iterator[tuple[list[str], Any]]: ...

    def embedded_count(self) -> int: ...


class IndexKind(Protocol):
    """How to build, save and load one derived index. ``version`` changes force a rebuild."""

    name: str
    version: int

    def build(self, library: "PaperSource") -> Any: ...

    def save(self, index: Any, folder: Path) -> None: ...

    def load(self, folder: Path) -> Any: ...


def _source_stamp(kind: IndexKind, library: "PaperSource") -> str:
    """What the index reflects: the library's generation, or the kind's own ``stamp(library)`` when it
    also reads data that changes apart from the papers (the citation-context memory)."""
    own = getattr(kind, "stamp", None)
    return str(own(library)) if callable(own) else library.generation()


def _is_current(kind: IndexKind, index: Any, library: "PaperSource") -> bool:
    """An index kind may check what it holds against the store (``is_current``), e.g. that it has as
    many vectors as the store: another process's writes can reach the store before its index."""
    check = getattr(kind, "is_current", None)
    return bool(check(index, library)) if callable(check) else True


class IndexPlaces(NamedTuple):
    """Where a library's derived indexes live when not in its own folder (a library searched in place without
    writing, :mod:`citefinder.library.readonly`): ``read`` folders whose saved indexes are read when current
    (the library's own), then ``save`` (a cache folder; None: built indexes are kept in memory only)."""

    save: Path | None
    read: tuple[Path, ...] = ()


class DerivedIndexes:
    """The derived indexes of one library folder, cached in memory per generation.

    ``root``: the folder whose ``indexes/`` they are read from and saved into (None: saved nowhere);
    ``read``: other library folders whose saved indexes are read first when current, never written."""

    def __init__(self, root: Path | None, *, read: tuple[Path, ...] = ()) -> None:
        self.root = Path(root) / INDEXES_DIR if root is not None else None
        self._read = tuple(Path(r) / INDEXES_DIR for r in read)
        self._cache: dict[str, tuple[str, Any]] = {}
        self._missing: dict[str, str] = {}  # kind -> the stamp :meth:`saved` found no index for
        self._lock = threading.RLock()

    def get(self, kind: IndexKind, library: "PaperSource") -> Any:
        """The index for the library's current generation: from memory, from disk, or built now."""
        stamp = f"{_source_stamp(kind, library)}/{kind.version}"
        cached = self._cache.get(kind.name)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        with self._lock:
            cached = self._cache.get(kind.name)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            index = None
            for root in self._read + ((self.root,) if self.root is not None else ()):
                index = _load_current(kind, root / kind.name, stamp, library)
                if index is not None:
                    break
            if index is None:
                index = kind.build(library)
                try:
                    if self.root is not None:
                        _save(kind, index, self.root / kind.name, stamp)
                except OSError as e:  # read-only library: keep the index in memory only
                    log.info("could not save derived index %s (%s); kept in memory", kind.name, e)
            self._cache[kind.name] = (stamp, index)
            return index

    def saved(self, kind: IndexKind, library: "PaperSource") -> Any:
        """The index when one is current in memory or on disk, else None: never built here (an index too costly
        to build as a side effect of a search, built by a command of its own)."""
        stamp = f"{_source_stamp(kind, library)}/{kind.version}"
        cached = self._cache.get(kind.name)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if self._missing.get(kind.name) == stamp:
            return None
        with self._lock:
            for root in self._read + ((self.root,) if self.root is not None else ()):
                index = _load_current(kind, root / kind.name, stamp, library)
                if index is not None:
                    self._cache[kind.name] = (stamp, index)
                    return index
            self._missing[kind.name] = stamp
            return None

    def store(self, kind: IndexKind, library: "PaperSource", index: Any) -> None:
        """Keep ``index`` (built by the caller, e.g. brought up to date from the saved one) as the current one:
        saved in ``root`` when there is one (else in memory only)."""
        stamp = f"{_source_stamp(kind, library)}/{kind.version}"
        with self._lock:
            try:
                if self.root is not None:
                    _save(kind, index, self.root / kind.name, stamp)
            except OSError as e:
                log.info("could not save derived index %s (%s); kept in memory", kind.name, e)
            self._cache[kind.name] = (stamp, index)
            self._missing.pop(kind.name, None)

    def rebuild(self, kinds: list[IndexKind], library: "PaperSource") -> None:
        """Build every kind for the current generation (called after a write)."""
        for kind in kinds:
            self.get(kind, library)


def _load_current(kind: IndexKind, folder: Path, stamp: str, library: "PaperSource") -> Any:
    """The index saved in ``folder`` when it reflects ``stamp`` and the store, else None."""
    if _saved_stamp(folder) != stamp:
        return None
    try:
        index = kind.load(folder)
    except Exception as e:  # noqa: BLE001 - a damaged derived index is rebuilt, never fatal
        log.warning("derived index %s in %s is unreadable (%s); rebuilding", kind.name, folder, e)
        return None
    if not _is_current(kind, index, library):
        log.info("derived index %s in %s does not match the store; rebuilding", kind.name, folder)
        return None
    return index


T = TypeVar("T")


def save_postings(folder: Path, file: str, postings: dict[str, Any]) -> None:
    """Save an index of postings (key -> tuples) as one JSON file."""
    (folder / file).write_text(json.dumps(postings))


def load_postings(folder: Path, file: str, row: Callable[[Any], T]) -> dict[str, tuple[T, ...]]:
    """Load :func:`save_postings`'s file, each posting turned back into its record by ``row``."""
    raw = json.loads((folder / file).read_text())
    return {str(k): tuple(row(x) for x in v) for k, v in raw.items()}


_PER_LIBRARY: "weakref.WeakKeyDictionary[Any, DerivedIndexes]" = weakref.WeakKeyDictionary()
_PER_LIBRARY_LOCK = threading.Lock()


def derived_indexes(library: PaperSource) -> DerivedIndexes:
    """The derived indexes of one open library (kept while the library object lives)."""
    with _PER_LIBRARY_LOCK:
        indexes = _PER_LIBRARY.get(library)
        if indexes is None:
            places = getattr(library, "index_places", None)  # (save, read): see IndexPlaces
            indexes = _PER_LIBRARY[library] = (DerivedIndexes(places[0], read=tuple(places[1]))
                                               if places is not None else DerivedIndexes(library.path))
        return indexes


def derived(library: PaperSource, kind: IndexKind) -> Any:
    """The index of ``kind`` for the library's current papers: from memory, from disk, or built now."""
    return derived_indexes(library).get(kind, library)


def _saved_stamp(folder: Path) -> str | None:
    try:
        return str(json.loads((folder / _STAMP).read_text())["stamp"])
    except (OSError, ValueError, KeyError):
        return None


def _save(kind: IndexKind, index: Any, folder: Path, stamp: str) -> None:
    """Write to a temporary folder, then swap it in, so a reader never sees half an index."""
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    kind.save(index, tmp)
    (tmp / _STAMP).write_text(json.dumps({"stamp": stamp}))
    old = folder.with_name(f"{folder.name}.old-{os.getpid()}")
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
