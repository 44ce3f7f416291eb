"""The "near" agent: BM25 over the few words right next to the marker.

A slot's sentence often names several things; the words touching the marker ("the ICWSM blog
corpus [CITATION]", "tagged with the Tree Tagger [CITATION]") say which one it cites. Searching
them alone, apart from the rest of the sentence, gives the fusion a list the long query drowns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library


class NearAgent:
    name = "near"
    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_bm25

    def skip_reason(self, query: Query) -> str | None:
        return None if query.near.strip() else "no words next to the marker"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"text": query.near}

    def search(self, query: Query) -> list[Hit]:
        return self.library.bm25_search(query.near, self.k)
