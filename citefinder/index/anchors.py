"""Anchor text: for each library paper, the sentences other authors (and the user) wrote citing it,
as one BM25 document (read by the "cited-as" agent).

The words the literature uses for a paper ("a pre-trained CNN", "accelerated SGD") are often not in its
title or abstract; matched over the sentences that cite it, a slot finds the paper the way other
authors referred to it (anchor text in web search: Craswell, Hawking & Robertson, SIGIR 2001).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from citefinder.index.memory import MemoryIndexKind
from citefinder.library.contexts.memory import memory_of
from citefinder.library.contexts.records import plain_text
from citefinder.library.store.bm25index import BM25Index


class AnchorIndexKind(MemoryIndexKind):
    """Derived index: a bm25s index with one document per cited library paper (its citing sentences)."""

    name = "anchors"
    version = 1

    def build(self, library: Any) -> BM25Index:
        texts: dict[str, list[str]] = defaultdict(list)
        for row in memory_of(library).matched_rows():
            texts[row.doc_id].append(plain_text(row.text))
        ids = sorted(texts)
        return BM25Index.build(ids, ["\n".join(texts[d]) for d in ids])

    def save(self, index: BM25Index, folder: Path) -> None:
        index.save(folder / "bm25", stamp="derived")

    def load(self, folder: Path) -> BM25Index:
        return BM25Index.load(folder / "bm25")


ANCHORS = AnchorIndexKind()
