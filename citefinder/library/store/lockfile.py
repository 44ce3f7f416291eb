"""A cross-process writer lock for one library folder (``fcntl.flock`` on ``<folder>/.write.lock``).

Chroma's embedded client is single-process: two processes writing one folder at once lose
vectors silently. Every writer (CLI import, embed, remove, repair, the app) takes this lock, so
one library folder supports several readers and one writer at a time; a second writer waits,
saying so. The lock is released by the kernel when a process dies, so a killed import never
leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from citefinder.errors import StoreUnavailableError

log = logging.getLogger(__name__)

LOCK_FILE = ".write.lock"


class FolderLock:
    """Re-entrant within one object (and thread-safe); exclusive across processes and objects."""

    def __init__(self, folder: Path, *, on_wait: Callable[[str], None] | None = None) -> None:
        self.path = Path(folder) / LOCK_FILE
        self.on_wait = on_wait or (lambda message: log.warning("%s", message))
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def acquire(self, *, blocking: bool = True) -> bool:
        """Take the lock; with ``blocking`` wait for another writer (telling ``on_wait`` once)."""
        if not self._thread_lock.acquire(blocking=blocking):
            return False
        if self._depth:
            self._depth += 1
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            self._thread_lock.release()
            if not blocking:
                return False
            raise StoreUnavailableError(f"Cannot write to the library folder {self.path.parent}: {e}. "
                                        "A read-only library can be searched but not changed.") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not blocking:
                os.close(fd)
                self._thread_lock.release()
                return False
            self.on_wait(f"Another process is writing to the library at {self.path.parent}; "
                         "waiting for it to finish...")
            t0 = time.monotonic()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                self._thread_lock.release()
                raise
            log.info("waited %.1f s for the library write lock", time.monotonic() - t0)
        self._fd = fd
        self._depth = 1
        return True

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        self._thread_lock.release()

    def held(self) -> bool:
        return self._depth > 0

    def __enter__(self) -> "FolderLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
