"""Title vectors: every paper's title embedded alone (read by the "title-dense" agent).

The dense agent's vectors embed a paper's title and abstract, so an entry with an abstract meets a slot with
far more text than a title-only one, and enriching some entries (``library enrich``) tilts the dense ranking
towards them. Here every entry is embedded the same way, whatever it holds. Built for a user's own library
(titles only, a few seconds for a thousand entries); a library above :data:`MAX_PAPERS` gets none (its papers
come from a dump with abstracts, and embedding every title after each write would cost minutes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citefinder.index.base import PaperSource
from citefinder.index.vectors import VECTORS, VectorMatrix

MAX_PAPERS = 20_000


class TitleVectorKind:
    """The :class:`~citefinder.index.base.IndexKind` of the title vectors (the library's own embedder)."""

    name = "title-vectors"
    version = 1

    def build(self, library: PaperSource) -> VectorMatrix:
        embedder = getattr(library, "embedder", None)
        count = getattr(library, "count", None)
        if embedder is None or (callable(count) and count() > MAX_PAPERS):
            return VectorMatrix((), np.zeros((0, 0), dtype=np.float32))
        ids, titles = [], []
        for paper in library.iter_papers():
            ids.append(paper.doc_id)
            titles.append(paper.title)
        if not ids:
            return VectorMatrix((), np.zeros((0, 0), dtype=np.float32))
        vectors = np.asarray(embedder.encode(titles), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return VectorMatrix(tuple(ids), vectors / norms)

    def save(self, index: VectorMatrix, folder: Path) -> None:
        VECTORS.save(index, folder)

    def load(self, folder: Path) -> VectorMatrix:
        return VECTORS.load(folder)


TITLE_VECTORS = TitleVectorKind()
