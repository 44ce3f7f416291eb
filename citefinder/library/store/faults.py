"""What went wrong below the library (disk, Chroma server, Ctrl-C), told in one line a user can act on.

Chroma, SQLite and httpx report a full disk or a lost server with many exception types; this
module sorts them into a few kinds so the store can say what was kept and how to resume.
"""

from __future__ import annotations

import errno
import sqlite3

DISK_FULL = "disk full"
SERVER_LOST = "server lost"
READ_ONLY = "read-only"
INTERRUPTED = "interrupted"
# a part of the store on disk is damaged: Chroma's vector index (HNSW segment), or an SQLite file
DAMAGED_INDEX = "vector index damaged"
DAMAGED_FILE = "damaged file"
OTHER = "other"

_DISK_FULL_TEXT = ("database or disk is full", "no space left on device", "disk is full", "disk quota exceeded")
_SERVER_TEXT = ("could not connect to", "connection refused", "connecterror", "server disconnected",
                "remote end closed", "connection reset", "failed to establish a new connection")
_READ_ONLY_TEXT = ("readonly database", "read-only file system", "attempt to write a readonly")
# Chroma (Rust) on a half-truncated or unreadable HNSW segment: "Error finding id" (data_level0.bin),
# "Error constructing hnsw segment reader ... Error deserializing pickle file" (index_metadata.pickle);
# its compactor failing to write the segment (a full disk during compaction): "Error sending backfill
# request to compactor"
_DAMAGED_INDEX_TEXT = ("error finding id", "hnsw segment reader", "hnsw segment writer", "error deserializing pickle",
                       "backfill request to compactor", "error loading hnsw index",
                       "error executing plan")  # a query over a segment folder that is gone
_DAMAGED_FILE_TEXT = ("database disk image is malformed", "file is not a database")


def classify(error: BaseException) -> str:
    """DISK_FULL, SERVER_LOST, READ_ONLY, INTERRUPTED or OTHER for ``error`` (and its causes)."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        kind = _one(e)
        if kind != OTHER:
            return kind
        e = e.__cause__ or e.__context__
    return OTHER


def _one(e: BaseException) -> str:
    if isinstance(e, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return DISK_FULL
    if isinstance(e, OSError) and e.errno == errno.EROFS:
        return READ_ONLY
    text = f"{type(e).__name__} {e}".lower()
    if any(t in text for t in _DISK_FULL_TEXT):
        return DISK_FULL
    if any(t in text for t in _READ_ONLY_TEXT):
        return READ_ONLY
    if any(t in text for t in _DAMAGED_INDEX_TEXT):
        return DAMAGED_INDEX
    if any(t in text for t in _DAMAGED_FILE_TEXT):
        return DAMAGED_FILE
    module = type(e).__module__ or ""
    if (module.startswith(("httpx", "httpcore")) or isinstance(e, ConnectionError)
            or any(t in text for t in _SERVER_TEXT)):
        return SERVER_LOST
    if isinstance(e, sqlite3.OperationalError) and "full" in text:
        return DISK_FULL
    return OTHER


def is_environmental(error: BaseException) -> bool:
    """True when ``error`` is about the disk, the server or the user, not about the record being written
    (nor about a damaged part of the store, which :func:`is_damage` names)."""
    return classify(error) in (DISK_FULL, SERVER_LOST, READ_ONLY, INTERRUPTED)


def is_damage(error: BaseException) -> bool:
    """True when ``error`` says a part of the store on disk is damaged (``library repair`` rebuilds it)."""
    return classify(error) in (DAMAGED_INDEX, DAMAGED_FILE)


def explain(error: BaseException, *, where: str, kept: str, resume: str) -> str:
    """One line: what happened, what was kept, how to resume."""
    kind = classify(error)
    detail = " ".join(str(error).split())[:200] or type(error).__name__
    if kind == DISK_FULL:
        what = f"The disk holding {where} is full"
        resume = f"free some space and {resume}"
    elif kind == SERVER_LOST:
        what = f"Lost the connection to the Chroma store ({where}: {detail})"
        resume = f"start the server again (`chroma run`) and {resume}"
    elif kind == READ_ONLY:
        what = f"The library ({where}) is read-only"
        resume = "use a writable library folder to change it"
    elif kind == INTERRUPTED:
        what = "Interrupted"
    elif kind == DAMAGED_INDEX:
        what = (f"Chroma's vector index of the library ({where}) is damaged or could not be written ({detail}); "
                "a file of its segment folder beside chroma.sqlite3 is truncated (a full disk during Chroma's "
                "compaction leaves it so)")
        resume = ("free some space if the disk is full, then run `citefinder library repair`: it moves the damaged "
                  "index aside and embeds the stored papers again")
    elif kind == DAMAGED_FILE:
        what = f"A database file of the library ({where}) is damaged ({detail})"
        resume = ("run `citefinder library repair`: it keeps what the file still holds and rebuilds the rest from the "
                  "stored papers")
    else:
        what = f"Writing to the library ({where}) failed: {type(error).__name__}: {detail}"
    return f"{what}. {kept}; {resume}."
