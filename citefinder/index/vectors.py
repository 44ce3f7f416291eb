"""Exact dense search: every stored vector in one matrix, searched by a matrix-vector product.

50k papers x 384 floats is 77 MB and one search takes a few milliseconds on a CPU, so up to a
few hundred thousand papers exact search is both affordable and repeatable (HNSW is approximate
and, built incrementally, not deterministic: measured, two identical fills could differ).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from citefinder.index.base import PaperSource, derived
from citefinder.types import Hit

if TYPE_CHECKING:
    from citefinder.library.store import Library

_IDS = "doc_ids.json"
_MATRIX = "vectors.npy"


@dataclass(frozen=True)
class VectorMatrix:
    """Unit-normalised vectors (one row per embedded paper) and their doc_ids."""

    doc_ids: tuple[str, ...]
    matrix: Any  # np.ndarray (n, dim) float32, rows of length 1

    def search(self, vector: Any, k: int) -> list[Hit]:
        """Top-``k`` by cosine similarity, best first; ties by storage order (deterministic)."""
        n = len(self.doc_ids)
        if n == 0 or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            return []
        sims = self.matrix @ (q / norm)
        k = min(k, n)
        top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        order = top[np.lexsort((top, -sims[top]))]
        return [Hit(self.doc_ids[int(i)], r, float(sims[int(i)])) for r, i in enumerate(order, start=1)]


class VectorIndexKind:
    """The :class:`~citefinder.index.base.IndexKind` of the exact dense search."""

    name = "vectors"
    version = 1

    def build(self, library: PaperSource) -> VectorMatrix:
        """The unit-length matrix, filled page by page into one array of the stored count (the
        vectors are held once, not as pages plus a stacked copy plus a normalised one)."""
        ids: list[str] = []
        matrix: np.ndarray | None = None
        for page_ids, page in library.iter_vectors():
            end = len(ids) + len(page_ids)
            if matrix is None:
                matrix = np.empty((max(library.embedded_count(), end), page.shape[1]), dtype=np.float32)
            elif end > matrix.shape[0]:  # papers embedded while this was read
                matrix = np.concatenate([matrix, np.empty((end - matrix.shape[0], matrix.shape[1]), np.float32)])
            norms = np.linalg.norm(page, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            matrix[len(ids) : end] = page / norms
            ids += page_ids
        if matrix is None or not ids:
            return VectorMatrix((), np.zeros((0, 0), dtype=np.float32))
        return VectorMatrix(tuple(ids), matrix[: len(ids)])

    def is_current(self, index: VectorMatrix, library: PaperSource) -> bool:
        """As many vectors as the store holds embedded papers."""
        return len(index.doc_ids) == library.embedded_count()

    def save(self, index: VectorMatrix, folder: Path) -> None:
        save_matrix(index, folder)

    def load(self, folder: Path) -> VectorMatrix:
        return load_matrix(folder)


def save_matrix(index: VectorMatrix, folder: Path) -> None:
    """A vector matrix and its doc ids into a derived index's folder (``vectors.npy``, ``doc_ids.json``)."""
    np.save(folder / _MATRIX, index.matrix)
    (folder / _IDS).write_text(json.dumps(list(index.doc_ids)))


def load_matrix(folder: Path) -> VectorMatrix:
    """What :func:`save_matrix` wrote, read back whole (memory-mapped, then copied)."""
    ids = json.loads((folder / _IDS).read_text())
    matrix = np.load(folder / _MATRIX, mmap_mode="r")
    if len(ids) != matrix.shape[0]:
        raise ValueError(f"{len(ids)} ids for {matrix.shape[0]} vectors")
    return VectorMatrix(tuple(ids), np.asarray(matrix))


VECTORS = VectorIndexKind()


def vector_search(library: "Library", vector: Any, k: int) -> list[Hit]:
    """Nearest papers to a query vector: exact cosine over all stored vectors up to
    ``settings.exact_dense_max`` papers (the same query gives the same list every time), Chroma's
    approximate HNSW index with a wide search above that."""
    n = library.embedded_count()
    if n == 0 or k <= 0:
        return []
    if n <= library.settings.exact_dense_max:
        return derived(library, VECTORS).search(vector, k)
    return library.hnsw_search(vector, k)


def dense_search(library: "Library", text: str, k: int) -> list[Hit]:
    """Nearest papers by cosine similarity of the embedded query (embedded papers only)."""
    if not text.strip() or k <= 0 or library.embedded_count() == 0:
        return []
    return vector_search(library, query_vector(library, text), k)


_QUERY_CACHE_SIZE = 16
_QUERIES: "weakref.WeakKeyDictionary[Any, OrderedDict[str, Any]]" = weakref.WeakKeyDictionary()
_QUERIES_LOCK = threading.Lock()


def query_vector(library: "Library", text: str, *, against: str = "papers") -> Any:
    """The embedded query text, remembered for the last few texts of this embedder: agents that read the
    same text (dense, and cited-like over the memory's sentences) embed it once.

    ``against="papers"``: by the library's query side (:func:`query_encoder`); ``"sentences"``: by the library's
    own embedder, the one that embedded the memory's citing sentences."""
    embedder = query_encoder(library)[0] if against == "papers" else library.embedder
    with _QUERIES_LOCK:
        cache = _QUERIES.setdefault(embedder, OrderedDict())
        if text in cache:
            cache.move_to_end(text)
            return cache[text]
    vector = embedder.encode([text])[0]
    with _QUERIES_LOCK:
        cache[text] = vector
        while len(cache) > _QUERY_CACHE_SIZE:
            cache.popitem(last=False)
    return vector


def query_encoder(library: "Library") -> tuple[Any, str]:
    """The embedder of queries and what the trace says about it: a query encoder trained against the library's
    vectors (setting query_encoder, :mod:`citefinder.library.encoders.query_side`), else the library's own, or (setting
    embed_query_int8) the int8 MiniLM over a fp32 MiniLM library, only where its ranking was measured to
    hold; "" when the embedder asked for is used as configured."""
    from citefinder.library.encoders.embedder import MINILM, int8_queries_hold
    from citefinder.library.encoders.query_side import SAME

    side = library.query_side
    if side.name != SAME or side.note:
        return side.embedder, side.note
    embedder = library.embedder
    if not library.settings.embed_query_int8:
        return embedder, ""
    if embedder.name != MINILM:
        return embedder, f"int8 queries not used: the library's vectors are {embedder.name!r}'s, not minilm's"
    holds, why = int8_queries_hold(embedder.name)
    if not holds:
        return embedder, f"int8 queries not used: {why}"
    return embedder.int8_queries(), f"query embedded by minilm-int8 against minilm (fp32) vectors: {why}"
