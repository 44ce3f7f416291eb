"""Papers stored but not yet embedded: a small SQLite queue in the library folder.

A deferred import writes papers here (fast: no model), so BM25 can search them at once; the
dense vectors are computed later by :meth:`Library.embed_pending`, batch by batch. Each batch
is added to Chroma first and only then removed from the queue, so a killed run loses nothing
and a re-run skips what already reached Chroma.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Sequence

from citefinder.types import Paper

FILE = "pending.sqlite"


class PendingQueue:
    """Ordered queue of papers waiting for their vectors; thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / FILE
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30)
        con.execute("CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "doc_id TEXT UNIQUE NOT NULL, paper TEXT NOT NULL)")
        return con

    def exists(self) -> bool:
        return self.path.exists()

    def count(self) -> int:
        if not self.exists():
            return 0
        with self._lock, closing(self._connect()) as con:
            return int(con.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    def add(self, papers: Sequence[Paper]) -> None:
        with self._lock, closing(self._connect()) as con, con:
            con.executemany("INSERT OR IGNORE INTO pending (doc_id, paper) VALUES (?, ?)",
                            [(p.doc_id, json.dumps(p.to_dict(), ensure_ascii=False)) for p in papers])

    def take(self, n: int, offset: int = 0) -> list[Paper]:
        """The oldest ``n`` papers after ``offset`` (they stay queued until :meth:`remove`)."""
        if not self.exists():
            return []
        with self._lock, closing(self._connect()) as con:
            rows = con.execute("SELECT paper FROM pending ORDER BY seq LIMIT ? OFFSET ?", (n, offset)).fetchall()
        return [Paper.from_dict(json.loads(r[0])) for r in rows]

    def get(self, doc_ids: Sequence[str]) -> dict[str, Paper]:
        if not self.exists() or not doc_ids:
            return {}
        out: dict[str, Paper] = {}
        with self._lock, closing(self._connect()) as con:
            for start in range(0, len(doc_ids), 500):
                chunk = list(doc_ids[start:start + 500])
                marks = ",".join("?" * len(chunk))
                for doc_id, paper in con.execute(f"SELECT doc_id, paper FROM pending WHERE doc_id IN ({marks})", chunk):
                    out[doc_id] = Paper.from_dict(json.loads(paper))
        return out

    def remove(self, doc_ids: Sequence[str]) -> int:
        if not self.exists() or not doc_ids:
            return 0
        with self._lock, closing(self._connect()) as con, con:
            cur = con.executemany("DELETE FROM pending WHERE doc_id = ?", [(d,) for d in doc_ids])
            return int(cur.rowcount)

    def replace(self, papers: Sequence[Paper]) -> None:
        """Rewrite queued papers (by doc_id) with new records, keeping their place; others are ignored."""
        if not self.exists() or not papers:
            return
        with self._lock, closing(self._connect()) as con, con:
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
        with self._lock, closing(self._connect()) as con:
            row = con.execute("SELECT paper FROM pending WHERE json_extract(paper, '$.key') = ? LIMIT 1",
                              (key,)).fetchone()
        return Paper.from_dict(json.loads(row[0])) if row else None
