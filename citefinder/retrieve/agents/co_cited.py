"""The "co-cited" agent: papers the literature cites together with the draft's other citations near the
slot (the keys already filled in a .tex next to it, confident picks of the slots before it).

Co-citation (Small, JASIS 1973): two papers cited by the same citing papers are related; the score of a
candidate is the cosine of its citing-paper set with each neighbour's, summed over the neighbours.
"""

from __future__ import annotations

from citefinder.index.cocitation import COCITATIONS, Cocitations
from citefinder.index.memory import memory_index
from citefinder.retrieve.base import LibraryAgent, hits_from_scores
from citefinder.types import Hit, Query


class CoCitedAgent(LibraryAgent):
    name = "co-cited"

    def skip_reason(self, query: Query) -> str | None:
        index, reason = memory_index(self.library, COCITATIONS)
        if reason:
            return reason
        if not query.cocited:
            return "no citation near the slot is known (no filled \\cite key next to it, no confident pick before it)"
        if not any(seed in index.citers for seed in query.cocited):
            return f"none of the {len(query.cocited)} citations near the slot is cited in the memory"
        return None

    def inputs(self, query: Query) -> dict[str, object]:
        return {"cocited": list(query.cocited)}

    def search(self, query: Query) -> list[Hit]:
        index: Cocitations | None = memory_index(self.library, COCITATIONS)[0]
        if index is None:
            return []
        return hits_from_scores(index.related(list(query.cocited)), self.k)
