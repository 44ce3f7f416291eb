"""Embedding the queue: the papers a deferred import stored without vectors get them, batch by batch (see
:mod:`citefinder.library.store.pending` for why a kill between a batch's two writes counts no paper twice)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from citefinder.errors import CitefinderError, ImportInterrupted, StoreUnavailableError
from citefinder.library.identity import identity
from citefinder.library.store import faults, stopping, writes
from citefinder.library.store.ahead import EncodeAhead
from citefinder.library.store.chroma import where
from citefinder.library.store.writes import LibraryWrites, Progress
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)


class LibraryEmbeds(LibraryWrites):
    """The embedding of queued papers (see the module docstring)."""

    def embed_pending(self, *, progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> int:
        """Embed queued papers batch by batch into Chroma; returns how many were embedded.

        Safe to interrupt and re-run: a batch leaves the queue only after Chroma holds it. A queued
        paper Chroma cannot store (bad metadata from an older version) is logged and dropped, so
        the queue always empties.
        """
        done = 0
        total = self._pending.count()
        ahead = EncodeAhead(self.embedder) if self.settings.embed_ahead else None
        with self.writing():
            self._mark_dirty(True)
            flying: tuple[list[Paper], list[Any], Future[Any] | None] | None = None  # the batch embedded ahead
            try:
                while True:
                    if should_stop and should_stop():
                        break  # the batch in flight stays queued, as when it was not embedded ahead
                    # the next batch of the queue (the one in flight is still queued until it is written)
                    batch = self._pending.take(writes.WRITE_BATCH, offset=len(flying[0]) if flying else 0)
                    nxt = None
                    if batch:
                        already = {p.doc_id for p in self._chroma_get([p.doc_id for p in batch])}
                        todo = [(p, (), identity(p)) for p in batch if p.doc_id not in already]
                        nxt = (batch, todo, ahead.submit([p for p, _, _ in todo]) if ahead and todo else None)
                    if flying is not None:
                        done += self._embed_queued(*flying)
                        if progress:
                            progress(done, total)
                    flying = nxt
                    if flying is None:
                        break
                if ahead is not None:
                    ahead.close()  # idle by now (or stopped between batches: the one in flight is dropped)
                self._commit(changed=bool(done))  # a Ctrl-C here too ends in the message below
            except BaseException as e:
                with stopping.finishing("waiting for the batch being embedded and saving the library's state"):
                    if ahead is not None:
                        ahead.close()
                    self._finish_after_failure(changed=bool(done))
                left = f"{done} papers were embedded and the others still wait in the queue"
                if faults.classify(e) == faults.INTERRUPTED:
                    raise ImportInterrupted(
                        f"Interrupted: {left}; run `citefinder library embed` again to resume."
                    ) from e
                if isinstance(e, CitefinderError):
                    raise
                raise StoreUnavailableError(faults.explain(e, where=where(self.settings), kept=left,
                                                           resume="run `citefinder library embed` again")) from e
        return done

    def _embed_queued(self, batch: list[Paper], todo: list[Any], vectors: "Future[Any] | None") -> int:
        """Write one batch of the queue into Chroma, then take it off the queue (marked in flight meanwhile)."""
        if todo:
            self._pending.mark_flight([p.doc_id for p, _, _ in todo])
            failures: list[ImportFailure] = []
            self._store_batch(todo, None, [], failures, False, vectors=vectors)
            for f in failures:
                log.warning("dropped from the embedding queue: %s: %s", f.source, f.reason)
        self._pending.remove([p.doc_id for p in batch])
        return len(batch)
