"""The "dense" agent: embedding retrieval (cosine similarity, exact up to a large library)."""

from __future__ import annotations

from dataclasses import replace

from citefinder.index.vectors import dense_search, query_encoder
from citefinder.library.encoders.query_side import SAME
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query, StageTrace


class DenseAgent(TextAgent):
    """Nearest papers to the embedded query: the slot's own part of the sentence, then the sentence.

    The trace says how much of the library it covers: papers imported with deferred embedding are
    searchable by BM25 only until their vectors are computed.
    """

    name = "dense"
    uses_variants = True
    needs_vectors = True

    def text(self, query: Query) -> str:
        return dense_text(query)

    def search_text(self, text: str) -> list[Hit]:
        return dense_search(self.library, text, self.k)

    def finish_trace(self, trace: StageTrace) -> StageTrace:
        """Say which encoder embedded the query (and why, when it is not the one asked for), and how much of the
        library has vectors when some papers still await them."""
        encoder, said = query_encoder(self.library)
        side = self.library.query_side
        label = side.name if side.name != SAME else getattr(encoder, "name", "")
        trace = replace(trace, details={**trace.details, "query_encoder": label})
        if said:
            trace = replace(trace, message=f"{trace.message}; {said}" if trace.message else said)
        pending = self.library.pending_count()
        if not pending:
            return trace
        total = self.library.count()
        covered = total - pending
        note = f"covers {covered:,} of {total:,} papers ({covered / total:.0%}); {pending:,} still await vectors"
        return replace(trace, message=f"{trace.message}; {note}" if trace.message else note,
                       details={**trace.details, "coverage": {"embedded": covered, "total": total}})

    def search(self, query: Query) -> list[Hit]:
        return dense_search(self.library, dense_text(query), self.k)


def dense_text(query: Query) -> str:
    """The slot's own part first (a sentence embedding weighs what it reads first), then the sentence."""
    if query.local and query.local != query.text:
        return f"{query.local}. {query.text}"
    return query.text
