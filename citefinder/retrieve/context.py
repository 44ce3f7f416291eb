"""The "context" agent: dense search over the slot's sentence and its two neighbours.

Many citing sentences say little by themselves ("Note that results from [CITATION] cannot be
compared"); the sentences around them carry the topic. Alone this list is weaker than the
sentence's (measured on CiteME, bench/RESULTS.md), so it enters the fusion as a separate,
down-weighted voice rather than replacing the sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


class ContextAgent:
    name = "context"
    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_dense

    def skip_reason(self, query: Query) -> str | None:
        if not query.window.strip() or query.window == query.text:
            return "no neighbouring sentences"
        return None if self.library.embedded_count() else "no paper has dense vectors yet"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"text": query.window}

    def search(self, query: Query) -> list[Hit]:
        return self.library.dense_search(query.window, self.k)
