"""The "title-dense" agent: the dense agent's query against every paper's title alone.

A title-only view scored for every entry beside the full one: an entry without an abstract competes here on
equal terms with one that has an abstract (found by ``library enrich`` or written by the user), so a partially
enriched library does not bury its title-only entries (issue 36; measured per paper in bench/RESULTS.md).
"""

from __future__ import annotations

from citefinder.index.base import derived
from citefinder.index.title_vectors import MAX_PAPERS, TITLE_VECTORS
from citefinder.index.vectors import query_vector
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query


class TitleDenseAgent(TextAgent):
    name = "title-dense"
    uses_variants = True
    needs_vectors = True

    def text(self, query: Query) -> str:
        return dense_text(query)

    def skip_reason(self, query: Query) -> str | None:
        if self.library.count() > MAX_PAPERS:
            return f"a library of more than {MAX_PAPERS:,} papers has no title vectors"
        return super().skip_reason(query)

    def search_text(self, text: str) -> list[Hit]:
        return derived(self.library, TITLE_VECTORS).search(query_vector(self.library, text), self.k)
