"""The "dense" agent: embedding retrieval (cosine similarity) over the library's Chroma collection."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from citefinder.retrieve.common import Rankings, run_retriever
from citefinder.types import Query, StageTrace

if TYPE_CHECKING:
    from citefinder.library.store import Library


def retrieve_dense(library: "Library", query: Query, k: int) -> tuple[Rankings, StageTrace]:
    """Top-``k`` dense hits for the query (and each variant); failures recorded, never raised.

    The trace says how much of the library the dense agent covers: papers imported with
    deferred embedding are searchable by BM25 only until their vectors are computed.
    """
    rankings, trace = run_retriever("dense", library.dense_search, query, k)
    pending = library.pending_count()
    if not pending:
        return rankings, trace
    total = library.count()
    covered = total - pending
    note = f"covers {covered:,} of {total:,} papers ({covered / total:.0%}); {pending:,} still await vectors"
    return rankings, replace(
        trace,
        message=f"{trace.message}; {note}" if trace.message else note,
        details={**trace.details, "coverage": {"embedded": covered, "total": total}},
    )
