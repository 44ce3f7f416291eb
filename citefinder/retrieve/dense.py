"""The "dense" agent: embedding retrieval (cosine similarity) over the library's Chroma collection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.retrieve.common import Rankings, run_retriever
from citefinder.types import Query, StageTrace

if TYPE_CHECKING:
    from citefinder.library.store import Library


def retrieve_dense(library: "Library", query: Query, k: int) -> tuple[Rankings, StageTrace]:
    """Top-``k`` dense hits for the query (and each variant); failures recorded, never raised."""
    return run_retriever("dense", library.dense_search, query, k)
