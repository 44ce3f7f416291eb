"""The authors index: folded surname -> the papers with that author, their position and year (read by
the "authors" agent)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from citefinder.index.base import PaperSource, load_postings, save_postings
from citefinder.library.identity import surname


@dataclass(frozen=True)
class AuthorsIndex:
    """Folded surname -> ((doc_id, position of the author, year or 0), ...)."""

    postings: dict[str, tuple[tuple[str, int, int], ...]]


class AuthorsIndexKind:
    name = "authors"
    version = 1

    def build(self, library: PaperSource) -> AuthorsIndex:
        postings: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
        for paper in library.iter_papers():
            for position, author in enumerate(paper.authors[:20]):
                key = surname(author)
                if key:
                    postings[key].append((paper.doc_id, position, paper.year or 0))
        return AuthorsIndex({k: tuple(v) for k, v in postings.items()})

    def save(self, index: AuthorsIndex, folder: Path) -> None:
        save_postings(folder, "authors.json", index.postings)

    def load(self, folder: Path) -> AuthorsIndex:
        return AuthorsIndex(load_postings(folder, "authors.json", lambda r: (str(r[0]), int(r[1]), int(r[2]))))


AUTHORS = AuthorsIndexKind()
