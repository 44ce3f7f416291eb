"""The "cited-as" agent: BM25 over the sentences that cite each paper (its anchor text in the
library's citation-context memory). Finds a paper by the words other authors use for it."""

from __future__ import annotations

from citefinder.index.anchors import ANCHORS
from citefinder.index.memory import memory_index
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query


class CitedAsAgent(TextAgent):
    """The slot's own part of its sentence (twice) and the sentence, against each paper's citing sentences."""

    name = "cited-as"

    def skip_reason(self, query: Query) -> str | None:
        return memory_index(self.library, ANCHORS)[1] or super().skip_reason(query)

    def search_text(self, text: str) -> list[Hit]:
        index, _ = memory_index(self.library, ANCHORS)
        return index.search(text, self.k) if index is not None else []
