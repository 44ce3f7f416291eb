"""Papers stored but not yet embedded: a small SQLite queue in the library folder.

A deferred import writes papers here (fast: no model), so BM25 can search them at once; the
dense vectors are computed later by :meth:`Library.embed_pending`, batch by batch. Each batch
is marked as in flight, added to Chroma and only then removed from the queue, so a killed run loses
nothing and a re-run skips what already reached Chroma. A kill between the two writes leaves papers both
stored and queued (two files, no shared transaction): the marks name the few that may be, so reads leave
them out and the next writer takes them off the queue (:meth:`LibraryCore._settle_queue`).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Sequence

from citefinder.errors import LibraryDamagedError
from citefinder.library.store.layout import PENDING as FILE
from citefinder.types import Paper

log = logging.getLogger(__name__)


class PendingQueue:
    """Ordered queue of papers waiting for their vectors; thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FILE
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        with self._named():
            con = sqlite3.connect(self.path, timeout=30)
            con.execute("CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                        "doc_id TEXT UNIQUE NOT NULL, paper TEXT NOT NULL)")
            # the batch being written to Chroma (a queue file of an older version gets the table here)
            con.execute("CREATE TABLE IF NOT EXISTS flight (doc_id TEXT PRIMARY KEY)")
        return con

    @contextmanager
    def _named(self) -> Iterator[None]:
        """A damaged queue file (half truncated: "database disk image is malformed") named as such."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError):
                raise  # locked, full disk, read-only: the callers name these
            raise LibraryDamagedError(
                f"The embedding queue {self.path} (papers stored but not embedded yet) is damaged ({e}); run "
                "`citefinder library repair` to keep what it still holds and start a new one."
            ) from e

    def damaged(self) -> bool:
        """Does the queue file fail SQLite's own check (or any read)?"""
        if not self.exists():
            return False
        try:
            with closing(sqlite3.connect(self.path, timeout=30)) as con:
                ok = con.execute("PRAGMA quick_check").fetchone()
                con.execute("SELECT COUNT(*) FROM pending").fetchone()
            return not ok or ok[0] != "ok"
        except sqlite3.OperationalError as e:
            return "no such table" not in str(e) and "locked" not in str(e)
        except sqlite3.DatabaseError:
            return True

    def salvage(self) -> list[str]:
        """Replace a damaged queue by a new one holding every paper the damaged file still yields; the
        damaged file is kept beside it. Returns what was done (nothing for a healthy queue)."""
        if not self.damaged():
            return []
        papers = _readable(self.path)
        kept = self.path.with_name(FILE + ".damaged")
        n = 2
        while kept.exists():
            kept = self.path.with_name(f"{FILE}.damaged{n}")
            n += 1
        os.replace(self.path, kept)
        for extra in ("-journal", "-wal", "-shm"):
            Path(f"{self.path}{extra}").unlink(missing_ok=True)
        if papers:
            self.add(papers)
        return [f"the embedding queue {FILE} was damaged: a new one holds the {len(papers)} queued papers the "
                f"damaged file still gave (it is kept as {kept.name}); papers queued after them were lost: import "
                "the files you imported with --defer-embedding again to get them back (stored papers are skipped)"]

    def exists(self) -> bool:
        return self.path.exists()

    def count(self) -> int:
        if not self.exists():
            return 0
        with self._lock, closing(self._connect()) as con, self._named():
            return int(con.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    def add(self, papers: Sequence[Paper]) -> None:
        with self._lock, closing(self._connect()) as con, self._named(), con:
            con.executemany("INSERT OR IGNORE INTO pending (doc_id, paper) VALUES (?, ?)",
                            [(p.doc_id, json.dumps(p.to_dict(), ensure_ascii=False)) for p in papers])

    def take(self, n: int, offset: int = 0, *, skip: Sequence[str] = ()) -> list[Paper]:
        """The oldest ``n`` papers after ``offset``, leaving out ``skip`` (they stay queued until :meth:`remove`)."""
        if not self.exists():
            return []
        marks = ",".join("?" * len(skip))
        leave = f"WHERE doc_id NOT IN ({marks}) " if skip else ""
        with self._lock, closing(self._connect()) as con, self._named():
            rows = con.execute(f"SELECT paper FROM pending {leave}ORDER BY seq LIMIT ? OFFSET ?",
                               (*skip, n, offset)).fetchall()
        return [Paper.from_dict(json.loads(r[0])) for r in rows]

    def _doc_ids(self, sql: str) -> list[str]:
        """The doc_ids the query ``sql`` selects (none while there is no queue)."""
        if not self.exists():
            return []
        with self._lock, closing(self._connect()) as con, self._named():
            return [r[0] for r in con.execute(sql)]

    def ids(self) -> list[str]:
        """Every queued doc_id, in order."""
        return self._doc_ids("SELECT doc_id FROM pending ORDER BY seq")

    def mark_flight(self, doc_ids: Sequence[str]) -> None:
        """Note that these queued papers are being written to Chroma (until :meth:`remove` or :meth:`land`)."""
        with self._lock, closing(self._connect()) as con, self._named(), con:
            con.executemany("INSERT OR IGNORE INTO flight (doc_id) VALUES (?)", [(d,) for d in doc_ids])

    def flying(self) -> list[str]:
        """The queued papers marked in flight: those a killed writer may have stored without dequeuing."""
        return self._doc_ids("SELECT doc_id FROM flight JOIN pending USING (doc_id)")

    def land(self, stored: Sequence[str]) -> int:
        """Take the papers Chroma holds (``stored``) off the queue and clear every in-flight mark."""
        if not self.exists():
            return 0
        with self._lock, closing(self._connect()) as con, self._named(), con:
            cur = con.executemany("DELETE FROM pending WHERE doc_id = ?", [(d,) for d in stored])
            con.execute("DELETE FROM flight")
            return int(cur.rowcount)

    def get(self, doc_ids: Sequence[str]) -> dict[str, Paper]:
        if not self.exists() or not doc_ids:
            return {}
        out: dict[str, Paper] = {}
        with self._lock, closing(self._connect()) as con, self._named():
            for start in range(0, len(doc_ids), 500):
                chunk = list(doc_ids[start:start + 500])
                marks = ",".join("?" * len(chunk))
                for doc_id, paper in con.execute(f"SELECT doc_id, paper FROM pending WHERE doc_id IN ({marks})", chunk):
                    out[doc_id] = Paper.from_dict(json.loads(paper))
        return out

    def remove(self, doc_ids: Sequence[str]) -> int:
        if not self.exists() or not doc_ids:
            return 0
        with self._lock, closing(self._connect()) as con, self._named(), con:
            cur = con.executemany("DELETE FROM pending WHERE doc_id = ?", [(d,) for d in doc_ids])
            removed = int(cur.rowcount)
            con.executemany("DELETE FROM flight WHERE doc_id = ?", [(d,) for d in doc_ids])
            return removed

    def replace(self, papers: Sequence[Paper]) -> None:
        """Rewrite queued papers (by doc_id) with new records, keeping their place; others are ignored."""
        if not self.exists() or not papers:
            return
        with self._lock, closing(self._connect()) as con, self._named(), con:
            con.executemany("UPDATE pending SET paper = ? WHERE doc_id = ?",
                            [(json.dumps(p.to_dict(), ensure_ascii=False), p.doc_id) for p in papers])

    def ids_from(self, source: str) -> list[str]:
        """The doc_ids of queued papers imported from the file named ``source``."""
        if not self.exists():
            return []
        with self._lock, closing(self._connect()) as con:
            rows = con.execute("SELECT doc_id FROM pending WHERE json_extract(paper, '$.source') = ? ORDER BY seq",
                               (source,)).fetchall()
        return [r[0] for r in rows]

    def find_key(self, key: str) -> Paper | None:
        """The queued paper whose citation key is ``key``, or None."""
        if not self.exists():
            return None
        with self._lock, closing(self._connect()) as con, self._named():
            row = con.execute("SELECT paper FROM pending WHERE json_extract(paper, '$.key') = ? LIMIT 1",
                              (key,)).fetchone()
        return Paper.from_dict(json.loads(row[0])) if row else None


def _readable(path: Path) -> list[Paper]:
    """The queued papers a damaged queue file still yields, in order. A file cut short (its header counts
    more pages than it holds) is read from a copy padded to its length: SQLite refuses the short file
    whole, but reads every row up to the first missing page of the padded one."""
    import struct
    import tempfile

    data = path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / FILE
        size = 0
        if len(data) >= 100 and data.startswith(b"SQLite format 3\x00"):
            page = struct.unpack(">H", data[16:18])[0]
            size = (65536 if page == 1 else page) * struct.unpack(">I", data[28:32])[0]
        copy.write_bytes(data + b"\0" * max(0, size - len(data)))
        papers: list[Paper] = []
        try:
            with closing(sqlite3.connect(copy)) as con:
                for (paper,) in con.execute("SELECT paper FROM pending ORDER BY seq"):
                    try:
                        papers.append(Paper.from_dict(json.loads(paper)))
                    except (ValueError, TypeError):
                        continue
        except sqlite3.DatabaseError as e:
            log.warning("reading the damaged queue stopped after %d papers: %s", len(papers), e)
    return papers
