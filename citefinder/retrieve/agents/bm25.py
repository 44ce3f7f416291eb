"""The "bm25" agent: lexical retrieval over title + authors + venue + abstract (bm25s)."""

from __future__ import annotations

from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit


class Bm25Agent(TextAgent):
    """BM25 over the library's main index, for the slot's own part of its sentence when it shares it
    (``Query.focus``)."""

    name = "bm25"
    uses_variants = True

    def search_text(self, text: str) -> list[Hit]:
        return self.library.bm25_search(text, self.k)
