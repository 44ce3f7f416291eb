"""Encoding one batch ahead: while a batch's vectors are written to Chroma (and the next papers are read,
checked and deduplicated), a worker thread already embeds the following batch.

Why: an import alternates between the encoder (every core, via torch's or onnxruntime's thread pool) and
work the encoder waits on: reading and checking records, the dedupe rule, Chroma's write (SQLite and the
HNSW index). Done one after the other, the cores idle during the second part; overlapped, the import runs
close to the encoder's own rate (bench/import_pipeline.py measures the fraction). The encoders release
the GIL while they compute, so one worker thread is enough. Batches are written in order, each only once
its vectors are ready, so a killed import keeps every fully written batch, as before; a batch that was
being embedded when it stopped is embedded again by the next run.

Ctrl-C: the main thread waits for a batch's vectors in short slices, so it runs the signal handler at
once; the stop then waits for the batch being embedded (the worker cannot be interrupted mid-batch).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np

from citefinder.library.records import embedding_text
from citefinder.types import Paper

log = logging.getLogger(__name__)


class EncodeAhead:
    """One worker that embeds submitted batches in order; :meth:`close` when done (also on failure)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="citefinder-encode")

    def submit(self, papers: Sequence[Paper]) -> "Future[np.ndarray]":
        texts = [embedding_text(p) for p in papers]
        return self._pool.submit(self._embedder.encode, texts)

    @staticmethod
    def result(future: "Future[np.ndarray]") -> np.ndarray:
        """The vectors of a submitted batch, waited for in short slices (a main thread blocked in one long wait
        runs no signal handler until it wakes)."""
        while True:
            try:
                return future.result(timeout=0.2)
            except TimeoutError:
                continue

    def close(self) -> None:
        """Stop: queued batches are cancelled; one being embedded finishes first (its vectors are dropped)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "EncodeAhead":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
