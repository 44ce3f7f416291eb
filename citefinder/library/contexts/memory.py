"""The context memory file: ``<library>/contexts.sqlite``, one per library folder.

It holds every imported record (matched to a library paper or not, so papers imported later match
without re-reading the pack), the identity keys each record can be matched by, the matches, and
the vectors of matched records only (embedded with the library's embedder). ``generation`` grows
with every change, so the derived indexes over it (``index/anchors.py``, ``index/citations.py``)
know when to rebuild.

Writes happen only under the library's writer lock (:mod:`citefinder.library.contexts.api`); a
write is one SQLite transaction, so a killed import leaves the memory as it was before the batch.
Readers (the agents) read through one connection per process. A damaged file raises
:class:`~citefinder.errors.LibraryDamagedError` saying how to repair it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.errors import LibraryDamagedError
from citefinder.library.contexts.records import ContextRecord

log = logging.getLogger(__name__)

FILE = "contexts.sqlite"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY, rid TEXT UNIQUE NOT NULL, text TEXT NOT NULL, prev TEXT, next TEXT,
  title TEXT NOT NULL, year INTEGER, authors TEXT NOT NULL, first_author TEXT, doc_id TEXT, doi TEXT, arxiv_id TEXT,
  citing TEXT NOT NULL, citing_title TEXT, citing_year INTEGER, grp TEXT, source TEXT, license TEXT, split TEXT,
  origin TEXT NOT NULL, pack_id TEXT, pack TEXT);
CREATE INDEX IF NOT EXISTS records_origin ON records(origin);
CREATE TABLE IF NOT EXISTS keys (key TEXT NOT NULL, record INTEGER NOT NULL, strength INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS keys_record ON keys(record);
CREATE TABLE IF NOT EXISTS matches (record INTEGER PRIMARY KEY, doc_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS matches_doc ON matches(doc_id);
CREATE TABLE IF NOT EXISTS vectors (record INTEGER PRIMARY KEY, vector BLOB NOT NULL);
"""
_COLUMNS = ("rid", "text", "prev", "next", "title", "year", "authors", "first_author", "doc_id", "doi", "arxiv_id",
            "citing", "citing_title", "citing_year", "grp", "source", "license", "split", "origin", "pack_id", "pack")


@dataclass(frozen=True)
class MatchedRow:
    """A record matched to a library paper, as the derived indexes read it."""

    record: int
    doc_id: str
    text: str
    citing: str
    group: str | None
    origin: str


@dataclass(frozen=True)
class Evidence:
    """A citing sentence from the memory, shown as "cited elsewhere as": where it comes from."""

    record: int
    doc_id: str
    text: str
    citing: str
    citing_title: str | None
    source: str | None
    origin: str

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record, "doc_id": self.doc_id, "text": self.text, "citing": self.citing,
                "citing_title": self.citing_title, "source": self.source, "origin": self.origin}


def damaged_message(path: Path, error: BaseException) -> str:
    return (f"The context memory {path} is damaged ({error}). Run `citefinder library repair`: it moves the "
            "damaged file aside and starts an empty memory; then import your context packs again.")


class ContextMemory:
    """The memory of one library folder (see the module docstring). Thread-safe."""

    def __init__(self, folder: Path, *, read_only: bool = False) -> None:
        self.path = Path(folder) / FILE
        # the memory of a literature library searched in place (ReadOnlyLibrary): read, never written
        self.read_only = read_only
        self._lock = threading.RLock()
        self._con: sqlite3.Connection | None = None
        self._generation: tuple[tuple[int, int, int], int] | None = None  # (file stamp, generation)

    # --- connection --------------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.exists()

    def _connect(self) -> sqlite3.Connection:
        if self._con is None and self.read_only:
            self._con = _connect_read_only(self.path)
        if self._con is None:
            con = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            try:
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if not {"meta", "records", "keys", "matches", "vectors"} <= tables:  # new (a read-only one never is)
                    con.executescript(_SCHEMA)
                    with con:
                        con.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))
                        con.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '0')")
                _migrate_rids(con)
            except sqlite3.DatabaseError as e:
                con.close()
                raise LibraryDamagedError(damaged_message(self.path, e)) from e
            self._con = con
        return self._con

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._connect()
            except sqlite3.DatabaseError as e:
                raise LibraryDamagedError(damaged_message(self.path, e)) from e

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write: committed whole or not at all; bumps the generation. Callers hold the library's writer lock."""
        try:
            with self._read() as con, con:
                yield con
                con.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        finally:
            self._generation = None

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def check(self) -> str | None:
        """None when the file is sound, else what is wrong (SQLite's integrity check)."""
        if not self.exists():
            return None
        try:
            with self._lock:
                row = self._connect().execute("PRAGMA quick_check").fetchone()
        except (sqlite3.DatabaseError, LibraryDamagedError) as e:
            return str(e)
        return None if row and row[0] == "ok" else str(row[0] if row else "no answer")

    # --- reads -------------------------------------------------------------------------------------

    def generation(self) -> int:
        """Grows with every change; 0 when there is no memory. Read again only when the file changed
        (every query asks, several times)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return 0
        seen = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._generation
        if cached is not None and cached[0] == seen:
            return cached[1]
        with self._read() as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        generation = int(row[0]) if row else 0
        self._generation = (seen, generation)
        return generation

    def meta(self, key: str) -> str | None:
        with self._read() as con:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def counts(self) -> dict[str, int]:
        """Records held (and per origin), records matched to a library paper, papers cited at least once."""
        if not self.exists():
            return {"contexts": 0, "contexts_matched": 0, "papers_cited": 0}
        with self._read() as con:
            total = con.execute("SELECT COUNT(*) FROM records").fetchone()[0]
            matched, papers = con.execute("SELECT COUNT(*), COUNT(DISTINCT doc_id) FROM matches").fetchone()
            by_origin = dict(con.execute("SELECT origin, COUNT(*) FROM records GROUP BY origin").fetchall())
        out = {"contexts": int(total), "contexts_matched": int(matched), "papers_cited": int(papers)}
        out.update({f"contexts_{o}": int(n) for o, n in sorted(by_origin.items())})
        return out

    def matched_rows(self) -> list[MatchedRow]:
        if not self.exists():
            return []
        with self._read() as con:
            rows = con.execute("SELECT r.id, m.doc_id, r.text, r.citing, r.grp, r.origin FROM matches m "
                               "JOIN records r ON r.id = m.record ORDER BY r.id").fetchall()
        return [MatchedRow(int(a), str(b), str(c), str(d), e, str(f)) for a, b, c, d, e, f in rows]

    def vectors(self) -> tuple[list[int], list[str], Any]:
        """(record ids, their papers, the unit vectors as one float32 matrix) of the matched records."""
        if not self.exists():
            return [], [], np.zeros((0, 0), dtype=np.float32)
        with self._read() as con:
            rows = con.execute("SELECT v.record, m.doc_id, v.vector FROM vectors v JOIN matches m "
                               "ON m.record = v.record ORDER BY v.record").fetchall()
        if not rows:
            return [], [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.vstack([np.frombuffer(v, dtype=np.float32) for _, _, v in rows])
        return [int(r) for r, _, _ in rows], [str(d) for _, d, _ in rows], matrix

    def evidence(self, records: Sequence[int]) -> dict[int, Evidence]:
        if not records or not self.exists():
            return {}
        out: dict[int, Evidence] = {}
        with self._read() as con:
            for start in range(0, len(records), 500):
                chunk = [int(r) for r in records[start:start + 500]]
                marks = ",".join("?" * len(chunk))
                for row in con.execute(f"SELECT r.id, m.doc_id, r.text, r.citing, r.citing_title, r.source, r.origin "
                                       f"FROM records r JOIN matches m ON m.record = r.id WHERE r.id IN ({marks})",
                                       chunk):
                    out[int(row[0])] = Evidence(int(row[0]), *row[1:])
        return out

    def unmatched_keys(self) -> list[tuple[int, str, int | None, str | None]]:
        """(record, key, cited year, first author) of every record not matched yet, strongest key first."""
        with self._read() as con:
            return con.execute("SELECT k.record, k.key, r.year, r.first_author FROM keys k JOIN records r "
                               "ON r.id = k.record WHERE k.record NOT IN (SELECT record FROM matches) "
                               "ORDER BY k.record, k.strength").fetchall()

    def own_records(self) -> set[int]:
        """The matched records that are the user's own (learned picks, their LaTeX)."""
        if not self.exists():
            return set()
        with self._read() as con:
            return {int(r[0]) for r in con.execute("SELECT m.record FROM matches m JOIN records r ON r.id = m.record "
                                                   "WHERE r.origin IN ('user', 'latex')")}

    def learned(self, doc_id: str) -> list[tuple[str, str]]:
        """(draft, sentence) of every learned pick (origin "user") of ``doc_id``, oldest first."""
        if not self.exists():
            return []
        with self._read() as con:
            return [(str(c), str(t)) for c, t in con.execute(
                "SELECT citing, text FROM records WHERE origin = 'user' AND doc_id = ? ORDER BY id", (doc_id,))]

    def matched_papers(self) -> set[str]:
        with self._read() as con:
            return {str(r[0]) for r in con.execute("SELECT DISTINCT doc_id FROM matches")}

    _UNEMBEDDED = ("FROM matches m JOIN records r ON r.id = m.record "
                   "WHERE m.record NOT IN (SELECT record FROM vectors)")  # matched records without a vector

    def unembedded_count(self) -> int:
        """How many matched records have no vector yet."""
        with self._read() as con:
            return int(con.execute(f"SELECT COUNT(*) {self._UNEMBEDDED}").fetchone()[0])

    def unembedded(self, limit: int) -> list[tuple[int, str]]:
        """(record, sentence) of matched records that have no vector yet."""
        with self._read() as con:
            return con.execute(f"SELECT r.id, r.text {self._UNEMBEDDED} ORDER BY r.id LIMIT ?", (limit,)).fetchall()

    # --- writes (under the library's writer lock) --------------------------------------------------

    def add(self, con: sqlite3.Connection, records: Sequence[ContextRecord], pack: str | None) -> tuple[int, list[int]]:
        """Insert records not held yet (by :attr:`ContextRecord.rid`, also within ``records``); returns
        (duplicates, new record ids in the order of ``records``)."""
        batch: dict[str, ContextRecord] = {}
        for r in records:
            batch.setdefault(r.rid, r)
        held: set[str] = set()
        rids = list(batch)
        for start in range(0, len(rids), 900):
            chunk = rids[start:start + 900]
            marks = ",".join("?" * len(chunk))
            held.update(x[0] for x in con.execute(f"SELECT rid FROM records WHERE rid IN ({marks})", chunk))
        fresh = [(rid, r) for rid, r in batch.items() if rid not in held]
        first = int(con.execute("SELECT COALESCE(MAX(id), 0) FROM records").fetchone()[0]) + 1
        ids = list(range(first, first + len(fresh)))
        con.executemany(
            f"INSERT INTO records (id, {', '.join(_COLUMNS)}) VALUES (?, {', '.join('?' * len(_COLUMNS))})",
            [(i, rid, r.text, r.prev, r.next, r.title, r.year, json.dumps(list(r.authors), ensure_ascii=False),
              r.first_author, r.doc_id, r.doi, r.arxiv_id, r.citing, r.citing_title, r.citing_year, r.group,
              r.source, r.license, r.split, r.origin, r.pack_id, pack) for i, (rid, r) in zip(ids, fresh, strict=True)])
        con.executemany("INSERT INTO keys (key, record, strength) VALUES (?, ?, ?)",
                        [(k, i, n) for i, (_, r) in zip(ids, fresh, strict=True) for n, k in enumerate(r.match_keys())])
        return len(records) - len(fresh), ids

    def set_matches(self, con: sqlite3.Connection, pairs: Sequence[tuple[int, str]]) -> None:
        con.executemany("INSERT OR REPLACE INTO matches (record, doc_id) VALUES (?, ?)", pairs)

    def drop_papers(self, con: sqlite3.Connection, doc_ids: Sequence[str]) -> int:
        """Forget the matches (and vectors) of papers no longer in the library; their records stay."""
        dropped = 0
        for start in range(0, len(doc_ids), 500):
            chunk = list(doc_ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            con.execute(f"DELETE FROM vectors WHERE record IN (SELECT record FROM matches WHERE doc_id IN ({marks}))",
                        chunk)
            dropped += con.execute(f"DELETE FROM matches WHERE doc_id IN ({marks})", chunk).rowcount
        return dropped

    def set_vectors(self, con: sqlite3.Connection, records: Sequence[int], vectors: Any) -> None:
        rows = [(int(r), np.asarray(v, dtype=np.float32).tobytes()) for r, v in zip(records, vectors, strict=True)]
        con.executemany("INSERT OR REPLACE INTO vectors (record, vector) VALUES (?, ?)", rows)

    def set_meta(self, con: sqlite3.Connection, key: str, value: str) -> None:
        con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def clear(self, con: sqlite3.Connection, origins: Sequence[str] | None = None, *, everything: bool = False) -> int:
        """Delete records of the given origins (every record with ``everything``); returns how many."""
        where, args = ("", []) if everything else (f"WHERE origin IN ({','.join('?' * len(origins or ()))})",
                                                     list(origins or ()))
        ids = f"SELECT id FROM records {where}"
        for table, column in (("vectors", "record"), ("matches", "record"), ("keys", "record")):
            con.execute(f"DELETE FROM {table} WHERE {column} IN ({ids})", args)
        return int(con.execute(f"DELETE FROM records {where}", args).rowcount)

    def reset_matches(self, con: sqlite3.Connection) -> None:
        """Forget every match (``library repair`` matches again; vectors of records matched again are kept)."""
        con.execute("DELETE FROM matches")

    def drop_orphan_vectors(self, con: sqlite3.Connection) -> int:
        return int(con.execute("DELETE FROM vectors WHERE record NOT IN (SELECT record FROM matches)").rowcount)


_MEMORIES: "weakref.WeakKeyDictionary[Any, ContextMemory]" = weakref.WeakKeyDictionary()
_MEMORIES_LOCK = threading.Lock()


def memory_of(library: Any) -> ContextMemory:
    """The context memory of an open library (one object, and one connection, per library object)."""
    with _MEMORIES_LOCK:
        memory = _MEMORIES.get(library)
        if memory is None or memory.path.parent != Path(library.path):
            memory = _MEMORIES[library] = ContextMemory(Path(library.path),
                                                        read_only=bool(getattr(library, "never_written", False)))
        return memory


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """The memory of a folder searched in place, opened read-only (``immutable`` when even that would need to
    write, as for a WAL file in a folder SQLite may not write beside); its schema is read, never made."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        con.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return con
    except sqlite3.Error:
        pass
    try:
        con = sqlite3.connect(f"file:{path}?immutable=1", uri=True, check_same_thread=False)
        con.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return con
    except sqlite3.DatabaseError as e:
        raise LibraryDamagedError(damaged_message(path, e)) from e


def _migrate_rids(con: sqlite3.Connection) -> None:
    """Stored record ids made by an older rule recomputed (:data:`RID_VERSION`), once."""
    from citefinder.library.contexts.records import RID_VERSION, record_id

    row = con.execute("SELECT value FROM meta WHERE key = 'rid'").fetchone()
    if row is not None and row[0] == RID_VERSION:
        return
    try:
        with con:
            rows = con.execute("SELECT id, text, title, citing, year, first_author, doi, arxiv_id "
                               "FROM records").fetchall()
            con.executemany("UPDATE records SET rid = ? WHERE id = ?",
                            [(record_id(t, ti, c or "", y, fa, d, a), i) for i, t, ti, c, y, fa, d, a in rows])
            con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rid', ?)", (RID_VERSION,))
    except sqlite3.OperationalError:  # a read-only memory keeps its ids (a re-import may then add a twin)
        log.warning("could not bring the memory's record ids up to date (read-only?)")
