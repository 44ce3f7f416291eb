"""The "context" agent: dense search over the slot's sentence and its two neighbours.

Many citing sentences say little by themselves ("Note that results from [CITATION] cannot be
compared"); the sentences around them carry the topic. Alone this list is weaker than the
sentence's (measured on CiteME, bench/RESULTS.md), so it enters the fusion as a separate,
down-weighted voice rather than replacing the sentence.
"""

from __future__ import annotations

from citefinder.index.vectors import dense_search
from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query


class ContextAgent(TextAgent):
    name = "context"
    needs_vectors = True
    empty_reason = "no neighbouring sentences"

    def text(self, query: Query) -> str:
        return query.window if query.window != query.text else ""

    def search_text(self, text: str) -> list[Hit]:
        return dense_search(self.library, text, self.k)
