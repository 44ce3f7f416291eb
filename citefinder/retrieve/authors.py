"""The "authors" agent: "Vaswani et al. (2017) [CITATION]" matched against authors and years.

The reformulator removes author mentions from the text query (they match nothing in an abstract);
this agent reads them instead. A first-author match counts most, a year match adds to it, a year
more than one off takes most of it away (a preprint and its proceedings are often a year apart).
"""

from __future__ import annotations

import json
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citefinder.retrieve.common import hits_from_scores
from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

W_FIRST, W_OTHER, W_YEAR, W_WRONG_YEAR = 2.0, 0.6, 1.0, -1.5


def fold(name: str) -> str:
    """Lower case without accents: "Schütze" -> "schutze"."""
    decomposed = unicodedata.normalize("NFKD", name)
    return "".join(c for c in decomposed if c.isalpha() and not unicodedata.combining(c)).lower()


def surname(author: str) -> str:
    """The surname of an author as stored ("First Last", or "Last, First")."""
    if "," in author:
        return fold(author.split(",")[0].split()[-1]) if author.split(",")[0].split() else ""
    parts = author.split()
    return fold(parts[-1]) if parts else ""


@dataclass(frozen=True)
class AuthorsIndex:
    """Folded surname -> ((doc_id, position of the author, year or 0), ...)."""

    postings: dict[str, tuple[tuple[str, int, int], ...]]


class AuthorsIndexKind:
    name = "authors"
    version = 1

    def build(self, library: "Library") -> AuthorsIndex:
        postings: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        for paper in library.iter_papers():
            for position, author in enumerate(paper.authors[:20]):
                key = surname(author)
                if key:
                    postings[key].append((paper.doc_id, position, paper.year or 0))
        return AuthorsIndex({k: tuple(v) for k, v in postings.items()})

    def save(self, index: AuthorsIndex, folder: Path) -> None:
        (folder / "authors.json").write_text(json.dumps({k: list(map(list, v)) for k, v in index.postings.items()}))

    def load(self, folder: Path) -> AuthorsIndex:
        raw = json.loads((folder / "authors.json").read_text())
        return AuthorsIndex({k: tuple((str(d), int(p), int(y)) for d, p, y in v) for k, v in raw.items()})


AUTHORS = AuthorsIndexKind()


class AuthorsAgent:
    name = "authors"
    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library") -> None:
        self.library = library
        self.k = settings.k_bm25

    def skip_reason(self, query: Query) -> str | None:
        return None if query.authors else "no author named next to the marker"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"authors": [a.to_dict() for a in query.authors]}

    def search(self, query: Query) -> list[Hit]:
        index: AuthorsIndex = self.library.derived(AUTHORS)
        scores: dict[str, float] = {}
        for position, mention in enumerate(query.authors):
            decay = 1.0 / (1.0 + position)
            for doc_id, author_pos, year in index.postings.get(fold(mention.surname), ()):
                score = W_FIRST if author_pos == 0 else W_OTHER
                if mention.year and year:
                    score += W_YEAR if abs(year - mention.year) <= 1 else W_WRONG_YEAR
                scores[doc_id] = max(scores.get(doc_id, 0.0), score * decay)
        return hits_from_scores(scores, self.k)
