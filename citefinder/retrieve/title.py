"""The "title" agent: BM25 over titles alone.

Most of a real library's entries have no abstract, and where one exists its words swamp the title's
in the main index; a title-only index lets a slot that paraphrases a title find it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from citefinder.library.bm25index import BM25Index
from citefinder.retrieve.common import TextAgent
from citefinder.types import Hit

if TYPE_CHECKING:
    from citefinder.library.store import Library


class TitleIndexKind:
    """Derived index: a bm25s index of every paper's title."""

    name = "titles"
    version = 1

    def build(self, library: "Library") -> BM25Index:
        ids, titles = [], []
        for p in library.iter_papers():
            ids.append(p.doc_id)
            titles.append(p.title)
        return BM25Index.build(ids, titles)

    def save(self, index: BM25Index, folder: Path) -> None:
        index.save(folder / "bm25", stamp="derived")

    def load(self, folder: Path) -> BM25Index:
        return BM25Index.load(folder / "bm25")


TITLES = TitleIndexKind()


class TitleAgent(TextAgent):
    name = "title"

    def search_text(self, text: str) -> list[Hit]:
        return self.library.derived(TITLES).search(text, self.k)
