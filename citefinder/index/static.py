"""Static vectors: every paper embedded by the shipped static embedding (:mod:`citefinder.library.encoders.static`), one
matrix searched exactly, a derived index of its own (``indexes/static-vectors/``) beside the MiniLM vectors.

They make a literature library of a few hundred thousand papers dense-searchable in minutes on a laptop
(``citefinder library embed --static``), where MiniLM takes hours: the ``static`` agents
(:mod:`citefinder.retrieve.agents.static`) are its dense first pass, fused with BM25 and the others. They are
never built as a side effect of a search: an agent that finds none current skips, saying how to build them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.index.base import PaperSource, derived_indexes
from citefinder.index.vectors import VectorMatrix, load_matrix, save_matrix
from citefinder.types import Hit

log = logging.getLogger(__name__)

PAGE = 4096  # papers read and embedded at once


def _count(library: PaperSource) -> int:
    count = getattr(library, "count", None)
    return int(count()) if callable(count) else 0


class StaticVectorKind:
    """The :class:`~citefinder.index.base.IndexKind` of the static vectors; its stamp names the model, so a
    new static embedding makes the saved matrix stale."""

    name = "static-vectors"
    version = 1

    def __init__(self, progress: Callable[[int, int], None] | None = None) -> None:
        self.progress = progress

    def stamp(self, library: PaperSource) -> str:
        from citefinder.library.encoders.static import static_encoder

        return f"{library.generation()}:{static_encoder().name}-{static_encoder().digest}"

    def build(self, library: PaperSource) -> VectorMatrix:
        """Every stored paper's title and abstract (the text MiniLM embeds), page by page into one matrix."""
        from citefinder.library.encoders.static import static_encoder
        from citefinder.library.records import embedding_text

        encoder = static_encoder()
        total = _count(library)
        matrix = np.empty((total, encoder.dim), dtype=np.float32)
        ids: list[str] = []
        page: list[Any] = []
        start = time.perf_counter()

        def flush() -> None:
            nonlocal matrix
            end = len(ids) + len(page)
            if end > matrix.shape[0]:  # more papers than counted: grow
                matrix = np.concatenate([matrix, np.empty((end - matrix.shape[0], encoder.dim), np.float32)])
            matrix[len(ids):end] = encoder.encode([embedding_text(p) for p in page])
            ids.extend(p.doc_id for p in page)
            page.clear()
            if self.progress:
                self.progress(len(ids), total)

        for paper in library.iter_papers():
            page.append(paper)
            if len(page) >= PAGE:
                flush()
        if page:
            flush()
        log.info("static vectors of %d papers in %.1f s", len(ids), time.perf_counter() - start)
        return VectorMatrix(tuple(ids), matrix[: len(ids)])

    def is_current(self, index: VectorMatrix, library: PaperSource) -> bool:
        """One vector per stored paper."""
        return len(index.doc_ids) == _count(library)

    def save(self, index: VectorMatrix, folder: Path) -> None:
        save_matrix(index, folder)

    def load(self, folder: Path) -> VectorMatrix:
        return load_matrix(folder)


STATIC_VECTORS = StaticVectorKind()


@dataclass(frozen=True)
class StaticBuilt:
    """What :func:`build_static` did: papers embedded, seconds, where the matrix is."""

    papers: int
    seconds: float
    folder: Path | None


def build_static(library: PaperSource, progress: Callable[[int, int], None] | None = None) -> StaticBuilt:
    """The library's static vectors, built now (minutes at 333k papers) and saved with its derived indexes, or
    the current ones when it has them."""
    start = time.perf_counter()
    index = derived_indexes(library).get(StaticVectorKind(progress), library)
    root = derived_indexes(library).root
    return StaticBuilt(len(index.doc_ids), time.perf_counter() - start,
                       root / StaticVectorKind.name if root is not None else None)


def saved_static(library: PaperSource) -> VectorMatrix | None:
    """The library's current static vectors when they were built (see :func:`build_static`), else None."""
    return derived_indexes(library).saved(STATIC_VECTORS, library)


def static_search(library: PaperSource, text: str, k: int) -> list[Hit]:
    """Papers nearest ``text`` by the static embedding (exact cosine); [] without static vectors."""
    index = saved_static(library)
    if index is None or not text.strip() or k <= 0:
        return []
    from citefinder.library.encoders.static import static_encoder

    return index.search(static_encoder().query(text), k)
