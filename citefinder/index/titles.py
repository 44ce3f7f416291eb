"""The title index: a bm25s index of every paper's title (read by the "title" agent).

Most of a real library's entries have no abstract, and where one exists its words swamp the title's
in the main index; a title-only index lets a slot that paraphrases a title find it.
"""

from __future__ import annotations

from pathlib import Path

from citefinder.index.base import PaperSource
from citefinder.library.store.bm25index import BM25Index


class TitleIndexKind:
    """Derived index: a bm25s index of every paper's title."""

    name = "titles"
    version = 1

    def build(self, library: PaperSource) -> BM25Index:
        return BM25Index.build_stream((p.doc_id, p.title) for p in library.iter_papers())

    def save(self, index: BM25Index, folder: Path) -> None:
        index.save(folder / "bm25", stamp="derived")

    def load(self, folder: Path) -> BM25Index:
        return BM25Index.load(folder / "bm25")


TITLES = TitleIndexKind()
