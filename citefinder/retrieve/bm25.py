"""The "bm25" agent: lexical retrieval over title + authors + venue + abstract (bm25s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


class Bm25Agent:
    """BM25 over the library's main index; the slot's own part of the sentence counts twice."""

    name = "bm25"
    uses_variants = True

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_bm25

    def skip_reason(self, query: Query) -> str | None:
        return None if query.text.strip() else "empty query"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"text": query.focus, "variants": list(query.variants)}

    def search(self, query: Query) -> list[Hit]:
        return self.library.bm25_search(query.focus, self.k)
