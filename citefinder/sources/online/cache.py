"""Every answer of an online source, kept on disk so that a second run sends nothing and a run that stopped
part-way resumes where it stopped.

One SQLite file (``<library>/sources-cache.sqlite``), one row per (service, request): the request is the
base URL, the method, the path with its query and the body, which hold only what the user chose to send
(titles, DOIs, arXiv ids, a slot's sentence), never a key or the contact address (those travel in headers,
which are not part of the key). Only usable answers are kept (200, and 404 "no such work"): a refusal, a
time-out or a malformed body is asked again next time.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from citefinder.errors import SourceError

log = logging.getLogger(__name__)

FILE_NAME = "sources-cache.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    service TEXT NOT NULL,
    request TEXT NOT NULL,
    status INTEGER NOT NULL,
    body BLOB NOT NULL,
    stored REAL NOT NULL,
    PRIMARY KEY (service, request)
)"""


class AnswerCache:
    """The cached answers at ``path`` (created on the first answer stored), reused for ``max_age_s`` seconds.
    Safe to share between threads (one connection behind a lock); every answer is committed as it arrives."""

    def __init__(self, path: Path, max_age_s: float) -> None:
        self.path = path
        self.max_age_s = max_age_s
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._con is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                con.execute(_SCHEMA)
                if self.max_age_s > 0:  # expired answers are never used again: deleted, so the file stays bounded
                    gone = con.execute("DELETE FROM answers WHERE stored < ?",
                                       (time.time() - self.max_age_s,)).rowcount
                    if gone:
                        log.info("deleted %d expired answers from %s", gone, self.path)
                con.commit()
            except (OSError, sqlite3.Error) as e:
                raise SourceError(f"The online sources' cache {self.path} cannot be opened ({e}): move or delete "
                                  "it, or set CITEFINDER_SOURCES_CACHE_DAYS=0 to ask without caching.") from e
            self._con = con
        return self._con

    def get(self, service: str, request: str) -> tuple[int, bytes] | None:
        """The (status, body) stored for ``request`` and still fresh, else None."""
        if not self.path.exists():
            return None
        with self._lock:
            row = self._connect().execute(
                "SELECT status, body, stored FROM answers WHERE service = ? AND request = ?", (service, request)
            ).fetchone()
        if row is None or time.time() - row[2] > self.max_age_s:
            return None
        return int(row[0]), bytes(row[1])

    def put(self, service: str, request: str, status: int, body: bytes) -> None:
        with self._lock:
            con = self._connect()
            con.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?)",
                        (service, request, status, body, time.time()))
            con.commit()

    def delete(self, service: str, requests: list[str]) -> None:
        """Forget these answers of ``service`` (found unusable after they were stored)."""
        if not self.path.exists():
            return
        with self._lock:
            con = self._connect()
            con.executemany("DELETE FROM answers WHERE service = ? AND request = ?",
                            [(service, r) for r in requests])
            con.commit()

    def clear(self, service: str | None = None) -> int:
        """Forget the answers of ``service`` (every service when None); how many were forgotten."""
        if not self.path.exists():
            return 0
        where, args = _of(service)
        with self._lock:
            con = self._connect()
            n = con.execute("DELETE FROM answers" + where, args).rowcount
            con.commit()
        log.info("forgot %d cached answers of %s in %s", n, service or "every source", self.path)
        return int(n)

    def count(self, service: str | None = None) -> int:
        if not self.path.exists():
            return 0
        where, args = _of(service)
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM answers" + where, args).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None


def cache_path(library: Path) -> Path:
    """Where the answers are kept: beside the library's own files, else (no library folder yet) in CiteFinder's
    cache folder (:func:`citefinder.config.cache_root`, ``$CITEFINDER_CACHE``), so asking a source never creates a
    library folder."""
    if library.is_dir():
        return library / FILE_NAME
    from citefinder.config import cache_root

    return cache_root() / FILE_NAME


def _of(service: str | None) -> tuple[str, tuple[str, ...]]:
    """The ``WHERE`` clause and its arguments that keep the answers of ``service`` (every service when None)."""
    return ("", ()) if service is None else (" WHERE service = ?", (service,))
