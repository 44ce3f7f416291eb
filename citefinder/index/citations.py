"""The citing sentences of the library's papers as vectors (read by the "cited-like" agent and the
"cited elsewhere as" evidence): one row per memory record matched to a library paper.

Only matched records have vectors (embedded with the library's embedder as their papers arrive,
:mod:`citefinder.library.contexts.sync`), so a large pack costs a small library nothing here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citefinder.index.memory import MemoryIndexKind
from citefinder.library.contexts.memory import memory_of

_ROWS = "rows.json"
_MATRIX = "vectors.npy"


@dataclass(frozen=True)
class CitationVectors:
    """Unit vectors of citing sentences, the memory record of each row and the paper it cites."""

    records: tuple[int, ...]
    doc_ids: tuple[str, ...]
    matrix: Any  # np.ndarray (n, dim) float32
    own: Any = None  # np.ndarray (n,) bool: the user's own sentences (picks, LaTeX), else None

    def __len__(self) -> int:
        return len(self.records)

    def nearest(self, vector: Any, n: int, own_bonus: float = 0.0) -> list[tuple[int, str, float]]:
        """The ``n`` citing sentences closest to ``vector``: (record, doc_id, cosine), closest first;
        ties by storage order. ``own_bonus`` is added to the cosine of the user's own sentences."""
        if not len(self.records) or n <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.matrix.shape[1]:
            return []  # vectors of another embedder: re-embedded at the next write
        sims = self.matrix @ q
        if own_bonus and self.own is not None:
            sims = sims + own_bonus * self.own
        n = min(n, len(self.records))
        top = np.argpartition(-sims, n - 1)[:n] if n < len(self.records) else np.arange(len(self.records))
        order = top[np.lexsort((top, -sims[top]))]
        return [(self.records[int(i)], self.doc_ids[int(i)], float(sims[int(i)])) for i in order]

    def nearest_for(self, vector: Any, doc_id: str) -> tuple[int, float] | None:
        """The citing sentence of ``doc_id`` closest to ``vector``: (record, cosine), or None."""
        rows = [i for i, d in enumerate(self.doc_ids) if d == doc_id]
        if not rows:
            return None
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.matrix.shape[1]:
            return None
        sims = self.matrix[rows] @ q
        best = int(np.argmax(sims))
        return self.records[rows[best]], float(sims[best])


class CitationVectorsKind(MemoryIndexKind):
    """Derived index: the matched records' vectors in one matrix."""

    name = "citation-vectors"
    version = 2

    def build(self, library: Any) -> CitationVectors:
        memory = memory_of(library)
        records, doc_ids, matrix = memory.vectors()
        if len(records):
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            matrix = (matrix / norms).astype(np.float32)
        mine = memory.own_records()
        own = np.asarray([r in mine for r in records], dtype=np.float32)
        return CitationVectors(tuple(records), tuple(doc_ids), matrix, own)

    def save(self, index: CitationVectors, folder: Path) -> None:
        np.save(folder / _MATRIX, index.matrix)
        own = [] if index.own is None else [i for i, x in enumerate(index.own) if x]
        (folder / _ROWS).write_text(json.dumps({"records": list(index.records), "doc_ids": list(index.doc_ids),
                                                "own": own}))

    def load(self, folder: Path) -> CitationVectors:
        rows = json.loads((folder / _ROWS).read_text())
        matrix = np.load(folder / _MATRIX)
        if len(rows["records"]) != (matrix.shape[0] if matrix.ndim == 2 else 0):
            raise ValueError(f"{len(rows['records'])} rows for {matrix.shape[0]} vectors")
        own = np.zeros(len(rows["records"]), dtype=np.float32)
        own[rows.get("own", [])] = 1.0
        return CitationVectors(tuple(rows["records"]), tuple(rows["doc_ids"]), matrix, own)


CITATION_VECTORS = CitationVectorsKind()
