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
once; the stop then waits for the batch being embedded (the worker cannot be interrupted mid-batch). That
wait is on the batch's future, never an interruptible join of the worker: in Python 3.11 and 3.12 a Ctrl-C landing in
``Thread.join`` marks the still-running worker as finished (cpython#90882), and the interpreter then exits
under a running forward and aborts ("terminate called without an active exception").
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor, wait
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
        self._submitted: list[Future[np.ndarray]] = []
        self._closed = False

    def submit(self, papers: Sequence[Paper]) -> "Future[np.ndarray]":
        texts = [embedding_text(p) for p in papers]
        self._submitted = [f for f in self._submitted if not f.done()]
        future = self._pool.submit(self._embedder.encode, texts)
        self._submitted.append(future)
        return future

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
        """Stop: queued batches are cancelled; one being embedded finishes first (its vectors are dropped).

        A Ctrl-C raised during the wait ends it (:func:`citefinder.library.store.stopping.finishing` decides when);
        the worker still ends before the interpreter does, as its thread is joined only once it is idle.
        """
        if self._closed:
            return
        for f in self._submitted:
            f.cancel()  # only those not started yet
        idle = self._pool.submit(int)  # one worker, in order: done once every batch before it is
        while idle not in wait([idle], timeout=0.2).done:
            continue
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)  # the worker is idle: it ends at once

    def __enter__(self) -> "EncodeAhead":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
