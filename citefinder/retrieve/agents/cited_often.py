"""The "cited-often" agent: the library's papers by how often the memory cites them, a prior.

The same list for every slot: in the fusion it lifts well-known papers a little, and the confidence
reads a candidate's rank in it (a pick the literature cites often is more likely right).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.index.cocitation import COCITATIONS, Cocitations
from citefinder.index.memory import memory_index
from citefinder.retrieve.base import hits_from_scores
from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


class CitedOftenAgent:
    name = "cited-often"
    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_bm25

    def skip_reason(self, query: Query) -> str | None:
        return memory_index(self.library, COCITATIONS)[1]

    def inputs(self, query: Query) -> dict[str, object]:
        return {}

    def search(self, query: Query) -> list[Hit]:
        index: Cocitations | None = memory_index(self.library, COCITATIONS)[0]
        if index is None:
            return []
        return hits_from_scores({d: float(n) for d, n in index.counts.items()}, self.k)
