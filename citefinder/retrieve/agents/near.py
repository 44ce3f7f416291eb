"""The "near" agent: BM25 over the few words right next to the marker.

A slot's sentence often names several things; the words touching the marker ("the ICWSM blog
corpus [CITATION]", "tagged with the Tree Tagger [CITATION]") say which one it cites. Searching
them alone, apart from the rest of the sentence, gives the fusion a list the long query drowns.
"""

from __future__ import annotations

from citefinder.retrieve.base import TextAgent
from citefinder.types import Hit, Query


class NearAgent(TextAgent):
    name = "near"
    empty_reason = "no words next to the marker"

    def text(self, query: Query) -> str:
        return query.near

    def search_text(self, text: str) -> list[Hit]:
        return self.library.bm25_search(text, self.k)
