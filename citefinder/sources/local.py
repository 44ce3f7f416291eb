"""A literature library: a CiteFinder library folder (e.g. built by ``library import`` from a dump) read as a
:class:`~citefinder.sources.base.Source`, without writing a byte of it.

Opening it reads nothing but its manifest: every answer is an indexed query on the folder's own files, opened
read-only. Embedded papers are found through Chroma's own index on ``embedding_metadata (key, string_value)``
(the ``doi``, ``arxiv_id`` and ``norm_title`` the library stores); papers still in the embedding queue
(``pending.sqlite``: all of them in a library imported BM25-first) have no index there, and the folder must
not be written, so their keys are indexed once in the user's cache (``$CITEFINDER_CACHE/literature/``, one
small SQLite file per folder, rebuilt when the queue changes; in memory when the cache cannot be written).
:meth:`LocalLiterature.search` is the folder's BM25 index, memory-mapped. A record's ``source_id`` is its
doc_id in the folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from citefinder.errors import SourceError
from citefinder.library.identity import normalize_title
from citefinder.library.records import from_record
from citefinder.library.reference import damaged_input, probe
from citefinder.library.store.layout import PENDING, STORE, connect_read_only, is_library_folder, not_a_library
from citefinder.sources.base import Lookup, SourceRecord
from citefinder.types import Paper

log = logging.getLogger(__name__)

_FIELD = {"doi": "doi", "arxiv": "arxiv_id", "title": "norm_title"}  # Lookup.by -> the stored metadata key
_CHUNK = 500  # values an SQL IN (...) holds
KEYS_VERSION = 1
ROLE = "literature library"  # how messages name the folder


def cache_root() -> Path:
    """Where CiteFinder keeps what it derives outside a library folder (:func:`citefinder.config.cache_root`)."""
    from citefinder.config import cache_root as root

    return root()


def lookup_value(query: Lookup) -> str:
    """The stored form of what ``query`` asks for: DOIs and arXiv ids are asked normalised, titles as
    written (the library stores them normalised)."""
    return normalize_title(query.value) if query.by == "title" else query.value


class LocalLiterature:
    """A literature library folder, read-only. ``name`` is the folder's name."""

    sends = ""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.name = folder.name
        manifest = _manifest(folder)
        self.collection = str(manifest.get("collection") or "papers")
        self._lock = threading.Lock()
        self._keys: QueueKeys | None = None
        self._bm25: Any = None
        self._segment: str | None = None

    @classmethod
    def open(cls, folder: Path | str) -> "LocalLiterature":
        folder = Path(folder).expanduser().resolve()
        if not is_library_folder(folder):
            raise SourceError(not_a_library(folder, ROLE))
        probe(folder, ROLE)
        return cls(folder)

    # --- the Source protocol ---------------------------------------------------------------------------

    def lookup(self, queries: Sequence[Lookup]) -> list[list[SourceRecord]]:
        """Every record whose DOI, arXiv id or normalised title is the one asked (each query's own key)."""
        wanted: dict[tuple[str, str], list[int]] = {}
        for i, q in enumerate(queries):
            if value := lookup_value(q):
                wanted.setdefault((q.by, value), []).append(i)
        found: dict[tuple[str, str], dict[str, Paper]] = {k: {} for k in wanted}
        for by in ("doi", "arxiv", "title"):
            values = [v for (b, v) in wanted if b == by]
            if not values:
                continue
            for value, paper in self._embedded_by(by, values):
                found[(by, value)].setdefault(paper.doc_id, paper)
            for value, paper in self._queued_by(by, values):
                found[(by, value)].setdefault(paper.doc_id, paper)
        out: list[list[SourceRecord]] = [[] for _ in queries]
        for key, papers in found.items():
            records = [self._record(p) for p in papers.values()]
            for i in wanted[key]:
                out[i] = list(records)
        return out

    def search(self, text: str, k: int) -> list[SourceRecord]:
        """The folder's BM25 ranking of ``text``, best first."""
        hits = self._index().search(text, k)
        papers = {p.doc_id: p for p in self.get([h.doc_id for h in hits])}
        return [self._record(papers[h.doc_id]) for h in hits if h.doc_id in papers]

    # --- reads -----------------------------------------------------------------------------------------

    def get(self, doc_ids: Sequence[str]) -> list[Paper]:
        """The papers of ``doc_ids`` (embedded or queued), in that order; unknown ids skipped."""
        ids = list(dict.fromkeys(doc_ids))
        found: dict[str, Paper] = {}
        if ids and (self.folder / STORE).is_file():
            with self._store() as con:
                segment = self._metadata_segment(con)
                for chunk in _chunks(ids):
                    rows = con.execute(f"SELECT id, embedding_id FROM embeddings WHERE segment_id = ? AND "
                                       f"embedding_id IN ({_marks(chunk)})", [segment, *chunk]).fetchall()
                    found.update({p.doc_id: p for p in _papers(con, dict(rows))})
        missing = [i for i in ids if i not in found]
        if missing and (self.folder / PENDING).is_file():
            with self._queue() as con:
                for chunk in _chunks(missing):
                    for (text,) in con.execute(f"SELECT paper FROM pending WHERE doc_id IN ({_marks(chunk)})", chunk):
                        paper = Paper.from_dict(json.loads(text))
                        found[paper.doc_id] = paper
        return [found[i] for i in ids if i in found]

    def count(self) -> int:
        """Papers in the folder (embedded and queued)."""
        n = 0
        if (self.folder / STORE).is_file():
            with self._store() as con:
                n += int(con.execute("SELECT COUNT(*) FROM embeddings WHERE segment_id = ?",
                                     [self._metadata_segment(con)]).fetchone()[0])
        if (self.folder / PENDING).is_file():
            with self._queue() as con:
                n += int(con.execute("SELECT COUNT(*) FROM pending").fetchone()[0])
        return n

    def _record(self, paper: Paper) -> SourceRecord:
        return SourceRecord(paper, self.name, paper.doc_id)

    def _embedded_by(self, by: str, values: list[str]) -> Iterator[tuple[str, Paper]]:
        if not (self.folder / STORE).is_file():
            return
        with self._store() as con:
            for chunk in _chunks(values):
                rows = con.execute(
                    f"SELECT m.id, m.string_value FROM embedding_metadata m WHERE m.key = ? AND "
                    f"m.string_value IN ({_marks(chunk)})", [_FIELD[by], *chunk]).fetchall()
                if not rows:
                    continue
                ids = dict(con.execute(f"SELECT id, embedding_id FROM embeddings WHERE id IN "
                                       f"({_marks(rows)})", [r[0] for r in rows]).fetchall())
                papers = {p.doc_id: p for p in _papers(con, ids)}
                for rid, value in rows:
                    if (paper := papers.get(ids.get(rid, ""))) is not None:
                        yield value, paper

    def _queued_by(self, by: str, values: list[str]) -> Iterator[tuple[str, Paper]]:
        if not (self.folder / PENDING).is_file():
            return
        keys = self._queue_keys()
        hits = keys.find(by, values)
        if not hits:
            return
        with self._queue() as con:
            seqs = sorted({seq for _, seq in hits})
            papers: dict[int, Paper] = {}
            for chunk in _chunks(seqs):
                for seq, text in con.execute(f"SELECT seq, paper FROM pending WHERE seq IN ({_marks(chunk)})", chunk):
                    papers[int(seq)] = Paper.from_dict(json.loads(text))
        for value, seq in hits:
            if seq in papers:
                yield value, papers[seq]

    # --- the folder's files, read-only --------------------------------------------------------------

    def _store(self) -> AbstractContextManager[sqlite3.Connection]:
        return _open(self.folder / STORE, self.folder)

    def _queue(self) -> AbstractContextManager[sqlite3.Connection]:
        return _open(self.folder / PENDING, self.folder)

    def _metadata_segment(self, con: sqlite3.Connection) -> str:
        if self._segment is None:
            row = con.execute("SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
                              "WHERE c.name = ? AND s.scope = 'METADATA'", [self.collection]).fetchone()
            self._segment = str(row[0]) if row else ""
        return self._segment

    def _queue_keys(self) -> "QueueKeys":
        with self._lock:
            stamp = _queue_stamp(self.folder / PENDING)
            if self._keys is None or self._keys.stamp != stamp:
                self._keys = QueueKeys.open(self.folder, stamp)
            return self._keys

    def _index(self) -> Any:
        from citefinder.library.store.bm25index import BM25Index
        from citefinder.library.store.core import BM25_DIR

        with self._lock:
            if self._bm25 is None:
                try:
                    self._bm25 = BM25Index.load(self.folder / BM25_DIR)
                except (OSError, ValueError) as e:
                    raise SourceError(f"The literature library {self.folder} has no BM25 index to search ({e}); "
                                      "open it once with CiteFinder (`citefinder --library FOLDER library stats`) "
                                      "where it may be written.") from e
            return self._bm25


class QueueKeys:
    """The DOI, arXiv id and normalised title of every queued paper of a folder -> its queue ``seq``: an index
    the queue itself lacks, kept outside the folder. ``stamp``: the queue file it reflects."""

    def __init__(self, con: sqlite3.Connection, stamp: str) -> None:
        self._con = con
        self.stamp = stamp
        self._lock = threading.Lock()

    @classmethod
    def open(cls, folder: Path, stamp: str) -> "QueueKeys":
        path = cache_root() / "literature" / hashlib.sha1(str(folder).encode()).hexdigest()[:16] / "keys.sqlite"
        if path.is_file():
            try:
                con = sqlite3.connect(path, check_same_thread=False)
                row = con.execute("SELECT value FROM meta WHERE name = 'stamp'").fetchone()
                if row and row[0] == stamp:
                    return cls(con, stamp)
                con.close()
            except sqlite3.Error:
                pass
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"keys.tmp-{os.getpid()}-{threading.get_ident()}.sqlite")
            tmp.unlink(missing_ok=True)
            con = sqlite3.connect(tmp, check_same_thread=False)
            _fill(con, folder / PENDING, stamp)
            con.close()
            os.replace(tmp, path)
            return cls(sqlite3.connect(path, check_same_thread=False), stamp)
        except OSError as e:  # a cache that cannot be written: the index lives in memory for this process
            log.info("cannot keep the key index of %s in %s (%s); building it in memory", folder, path.parent, e)
            con = sqlite3.connect(":memory:", check_same_thread=False)
            _fill(con, folder / PENDING, stamp)
            return cls(con, stamp)

    def find(self, by: str, values: Sequence[str]) -> list[tuple[str, int]]:
        """(value, seq) of every queued paper whose ``by`` key is one of ``values``."""
        out: list[tuple[str, int]] = []
        with self._lock:
            for chunk in _chunks(list(values)):
                out += self._con.execute(f"SELECT value, seq FROM keys WHERE field = ? AND value IN "
                                         f"({_marks(chunk)})", [by, *chunk]).fetchall()
        return out


def _fill(con: sqlite3.Connection, queue: Path, stamp: str) -> None:
    """One pass over the queue: SQLite's json_extract reads each paper's keys (no paper held in memory)."""
    con.execute("CREATE TABLE keys (field TEXT NOT NULL, value TEXT NOT NULL, seq INTEGER NOT NULL)")
    con.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
    with _open(queue, queue.parent) as src:
        rows = src.execute("SELECT seq, json_extract(paper, '$.doi'), json_extract(paper, '$.arxiv_id'), "
                           "json_extract(paper, '$.title') FROM pending")
        while batch := rows.fetchmany(10000):
            con.executemany("INSERT INTO keys VALUES (?, ?, ?)", _key_rows(batch))
    con.execute("CREATE INDEX keys_value ON keys (field, value)")
    con.execute("INSERT INTO meta VALUES ('stamp', ?)", [stamp])
    con.commit()


def _key_rows(batch: Iterable[tuple[int, Any, Any, Any]]) -> Iterator[tuple[str, str, int]]:
    for seq, doi, arxiv, title in batch:
        if doi:
            yield "doi", str(doi), seq
        if arxiv:
            yield "arxiv", str(arxiv), seq
        if norm := normalize_title(str(title or "")):
            yield "title", norm, seq


def _queue_stamp(queue: Path) -> str:
    """What changes when the queue file does (its size and modification time), with the index's version."""
    st = queue.stat()
    return f"{KEYS_VERSION}:{st.st_size}:{st.st_mtime_ns}"


@contextmanager
def _open(path: Path, folder: Path) -> Iterator[sqlite3.Connection]:
    """``path`` of the literature library ``folder``, read-only; a damaged file is said to be the literature's
    (:func:`~citefinder.library.reference.damaged_input`), never the user's library's."""
    try:
        con = connect_read_only(path)
    except sqlite3.Error as e:
        raise damaged_input(folder, ROLE, e) from e
    try:
        yield con
    except sqlite3.DatabaseError as e:
        raise damaged_input(folder, ROLE, e) from e
    finally:
        con.close()


def _papers(con: sqlite3.Connection, ids: dict[int, str]) -> list[Paper]:
    """The papers of Chroma rows ``ids`` (row id -> doc_id), from their metadata."""
    meta: dict[int, dict[str, object]] = {rid: {} for rid in ids}
    for chunk in _chunks(list(ids)):
        for rid, key, s, i, f in con.execute(
                f"SELECT id, key, string_value, int_value, float_value FROM embedding_metadata WHERE id IN "
                f"({_marks(chunk)})", chunk):
            meta[rid][key] = s if s is not None else (i if i is not None else f)
    out = []
    for rid, doc_id in ids.items():
        m = meta[rid]
        document = m.pop("chroma:document", "")
        out.append(from_record(doc_id, m, str(document or "")))
    return out


def _manifest(folder: Path) -> dict[str, Any]:
    from citefinder.library.store.manifest import read_manifest

    return read_manifest(folder)


def _chunks(values: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(values), _CHUNK):
        yield list(values[start:start + _CHUNK])


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))
