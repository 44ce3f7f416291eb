"""The "bm25" agent: lexical retrieval over the library's bm25s index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.retrieve.common import Rankings, run_retriever
from citefinder.types import Query, StageTrace

if TYPE_CHECKING:
    from citefinder.library.store import Library


def retrieve_bm25(library: "Library", query: Query, k: int) -> tuple[Rankings, StageTrace]:
    """Top-``k`` BM25 hits for the query (and each variant); failures recorded, never raised."""
    return run_retriever("bm25", library.bm25_search, query, k)
