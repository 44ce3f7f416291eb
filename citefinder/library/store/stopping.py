"""Stopping on Ctrl-C: once a write has been interrupted, the cleanup (waiting for the batch being embedded,
saving the BM25 index and the manifest) runs to its end, so the library is left consistent and the user
reads the one "Interrupted: ..." line that says what was kept and how to resume.

Why: on a large library the cleanup takes a while (a batch in the worker, the BM25 index of every paper),
and a user who sees nothing happen presses Ctrl-C again. Raised there, that second KeyboardInterrupt left
the manifest dirty and replaced the message with a bare "interrupted"; worse, when it landed in the join of
the encode worker, Python 3.11 and 3.12 mark the still-running thread as finished (cpython#90882), so the
interpreter exited under a running forward and the process aborted ("terminate called without an active
exception"). While :func:`finishing` holds, one more Ctrl-C is noted and said; a third ends the cleanup at
once (the next opening of the library rebuilds what it did not save).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

log = logging.getLogger(__name__)

FORCE_AFTER = 2  # further Ctrl-Cs while finishing: the first is said, the second stops at once


@contextmanager
def finishing(what: str) -> Iterator[None]:
    """Run the block without Ctrl-C interrupting it (up to :data:`FORCE_AFTER` presses; see the module docstring).

    Only on the main thread, and only while Python's own handler is installed (a terminal's Ctrl-C): other
    threads never receive signals, and a handler the application installed is left to the application."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    presses = [0]

    def noted(signum: int, frame: FrameType | None) -> None:
        presses[0] += 1
        if presses[0] >= FORCE_AFTER:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt(f"stopped while {what}: the library is checked and repaired when next opened")
        log.warning("still stopping: %s (Ctrl-C again to stop at once; the library is then repaired when next "
                    "opened)", what)

    signal.signal(signal.SIGINT, noted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
