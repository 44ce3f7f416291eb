"""The BM25 index saved beside the Chroma store (bm25s, English stemming and stopwords).

The index is derived data: it is rebuilt from what Chroma stores and swapped in atomically, so
an interrupted import never leaves a half-written index behind. Loaded with mmap so opening a
large library is fast.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Sequence

from citefinder.types import Hit, Paper

log = logging.getLogger(__name__)

_IDS = "doc_ids.json"
_MANIFEST = "manifest.json"


def bm25_text(paper: Paper) -> str:
    """The text BM25 indexes: title + authors + venue + abstract."""
    parts = [paper.title, " ".join(paper.authors), paper.venue or "", paper.abstract]
    return "\n".join(p for p in parts if p)


def _stemmer():  # noqa: ANN202 - PyStemmer has no types
    import Stemmer

    return Stemmer.Stemmer("english")


class BM25Index:
    """An immutable BM25 index over a fixed list of doc_ids (Robertson & Zaragoza 2009, via bm25s)."""

    def __init__(self, retriever: Any, doc_ids: Sequence[str]) -> None:  # a bm25s.BM25 or None
        self._retriever = retriever
        self.doc_ids = list(doc_ids)
        self._stem = _stemmer()

    def __len__(self) -> int:
        return len(self.doc_ids)

    @classmethod
    def build(cls, doc_ids: Sequence[str], texts: Sequence[str]) -> "BM25Index":
        import bm25s

        if not doc_ids:
            return cls(None, [])
        tokens = bm25s.tokenize(list(texts), stopwords="en", stemmer=_stemmer(), show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(retriever, doc_ids)

    def search(self, text: str, k: int) -> list[Hit]:
        """Top-k documents with a positive BM25 score, best first, 1-based ranks."""
        import bm25s

        if self._retriever is None or not text.strip() or k <= 0:
            return []
        query = bm25s.tokenize([text], stopwords="en", stemmer=self._stem, return_ids=False, show_progress=False)
        if not query or not query[0]:
            return []
        k = min(k, len(self.doc_ids))
        docs, scores = self._retriever.retrieve(query, k=k, show_progress=False, n_threads=1)
        hits: list[Hit] = []
        for idx, score in zip(docs[0].tolist(), scores[0].tolist(), strict=True):
            if score <= 0:
                break
            hits.append(Hit(self.doc_ids[int(idx)], len(hits) + 1, float(score)))
        return hits

    # --- persistence -------------------------------------------------------------------------

    def save(self, folder: Path, *, stamp: str) -> None:
        """Write to a temporary folder, then swap it in; ``stamp`` identifies the library state it reflects."""
        folder = Path(folder)
        tmp = folder.with_name(folder.name + f".tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if self._retriever is not None:
            self._retriever.save(str(tmp))
        (tmp / _IDS).write_text(json.dumps(self.doc_ids))
        (tmp / _MANIFEST).write_text(json.dumps({"count": len(self.doc_ids), "stamp": stamp}))
        old = folder.with_name(folder.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if folder.exists():
            folder.rename(old)
        tmp.rename(folder)
        shutil.rmtree(old, ignore_errors=True)

    @staticmethod
    def saved_stamp(folder: Path) -> str | None:
        """The stamp of the saved index, or None when there is no complete index."""
        try:
            return str(json.loads((Path(folder) / _MANIFEST).read_text())["stamp"])
        except (OSError, ValueError, KeyError):
            return None

    @classmethod
    def load(cls, folder: Path) -> "BM25Index":
        import bm25s

        folder = Path(folder)
        doc_ids = json.loads((folder / _IDS).read_text())
        if not doc_ids:
            return cls(None, [])
        retriever = bm25s.BM25.load(str(folder), mmap=True)
        return cls(retriever, doc_ids)
