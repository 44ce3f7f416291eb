"""The "cited-often" agent: the library's papers by how often the memory cites them, a prior.

The same list for every slot: in the fusion it lifts well-known papers a little, and the confidence
reads a candidate's rank in it (a pick the literature cites often is more likely right).
"""

from __future__ import annotations

from citefinder.index.cocitation import COCITATIONS, Cocitations
from citefinder.index.memory import memory_index
from citefinder.retrieve.base import LibraryAgent, hits_from_scores
from citefinder.types import Hit, Query


class CitedOftenAgent(LibraryAgent):
    name = "cited-often"

    def skip_reason(self, query: Query) -> str | None:
        return memory_index(self.library, COCITATIONS)[1]

    def inputs(self, query: Query) -> dict[str, object]:
        return {}

    def search(self, query: Query) -> list[Hit]:
        index: Cocitations | None = memory_index(self.library, COCITATIONS)[0]
        if index is None:
            return []
        return hits_from_scores({d: float(n) for d, n in index.counts.items()}, self.k)
