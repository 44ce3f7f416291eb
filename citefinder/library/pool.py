"""A few papers held in memory as a library the retrieval agents can search: the works an online source
answered for one slot (:mod:`citefinder.pipeline.literature`), ranked by the same agents as the user's papers.

Nothing is written anywhere: BM25 is built in memory, the derived indexes stay in memory
(``index_places``), and the papers are embedded by the given embedder (the user's, already loaded) when one
is given, else the dense agents skip.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from citefinder.config import Settings
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.encoders.query_side import QuerySide, query_side
from citefinder.library.records import embedding_text
from citefinder.library.store.bm25index import BM25Index, bm25_text
from citefinder.types import Hit, Paper


class PaperPool:
    """``papers`` (distinct doc_ids; later duplicates dropped) as a read-only, in-memory library."""

    read_only = True

    def __init__(self, settings: Settings, papers: Sequence[Paper], *, name: str = "pool",
                 embedder: Embedder | None = None) -> None:
        self._papers = {p.doc_id: p for p in reversed(papers)}
        self._order = list(dict.fromkeys(p.doc_id for p in papers))
        self.name = name
        self.path = Path(f"<{name}>")  # never opened: the derived indexes stay in memory
        self.index_places: tuple[Path | None, tuple[Path, ...]] = (None, ())
        self.embedder = embedder or Embedder(settings.embedder, settings.embed_max_seq_length,
                                             settings.embed_batch_size)
        self._embed = embedder is not None
        self.settings = settings.model_copy(update={"exact_dense_max": max(settings.exact_dense_max, len(papers))})
        self._bm25 = BM25Index.build(self._order, [bm25_text(self._papers[i]) for i in self._order])
        self._vectors: Any = None
        self._query_side: QuerySide | None = None
        self._stamp = hashlib.sha1("\n".join(self._order).encode()).hexdigest()[:12]

    @property
    def query_side(self) -> QuerySide:
        if self._query_side is None:
            self._query_side = query_side(self.settings.query_encoder, self.embedder)
        return self._query_side

    def count(self) -> int:
        return len(self._order)

    def embedded_count(self) -> int:
        return len(self._order) if self._embed else 0

    def pending_count(self) -> int:
        return self.count() - self.embedded_count()

    def generation(self) -> str:
        return self._stamp

    def get(self, doc_ids: Sequence[str]) -> list[Paper]:
        return [self._papers[i] for i in dict.fromkeys(doc_ids) if i in self._papers]

    def by_key(self, key: str) -> Paper | None:
        return None

    def bm25_search(self, text: str, k: int) -> list[Hit]:
        return self._bm25.search(text, k)

    def hnsw_search(self, vector: Any, k: int) -> list[Hit]:
        return []

    def iter_papers(self) -> Iterator[Paper]:
        return (self._papers[i] for i in self._order)

    def iter_vectors(self) -> Iterator[tuple[list[str], Any]]:
        if not self._embed or not self._order:
            return
        if self._vectors is None:
            self._vectors = self.embedder.encode([embedding_text(self._papers[i]) for i in self._order])
        yield list(self._order), self._vectors

    def on_write(self, name: str, hook: Callable[[], None]) -> None:
        """Nothing is ever written to a pool."""
