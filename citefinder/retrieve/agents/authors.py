"""The "authors" agent: "Vaswani et al. (2017) [CITATION]" matched against authors and years.

The reformulator removes author mentions from the text query (they match nothing in an abstract);
this agent reads them instead. A first-author match counts most, a year match adds to it, a year
more than one off takes most of it away (a preprint and its proceedings are often a year apart).
"""

from __future__ import annotations

from citefinder.index.authors import AUTHORS, AuthorsIndex
from citefinder.index.base import derived
from citefinder.library.identity import fold
from citefinder.retrieve.base import LibraryAgent, hits_from_scores
from citefinder.types import Hit, Query

W_FIRST, W_OTHER, W_YEAR, W_WRONG_YEAR = 2.0, 0.6, 1.0, -1.5


class AuthorsAgent(LibraryAgent):
    name = "authors"

    def skip_reason(self, query: Query) -> str | None:
        return None if query.authors else "no author named next to the marker"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"authors": [a.to_dict() for a in query.authors]}

    def search(self, query: Query) -> list[Hit]:
        index: AuthorsIndex = derived(self.library, AUTHORS)
        scores: dict[str, float] = {}
        for position, mention in enumerate(query.authors):
            decay = 1.0 / (1.0 + position)
            for doc_id, author_pos, year in index.postings.get(fold(mention.surname), ()):
                score = W_FIRST if author_pos == 0 else W_OTHER
                if mention.year and year:
                    score += W_YEAR if abs(year - mention.year) <= 1 else W_WRONG_YEAR
                scores[doc_id] = max(scores.get(doc_id, 0.0), score * decay)
        return hits_from_scores(scores, self.k)
