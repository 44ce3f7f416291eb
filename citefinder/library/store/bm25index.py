"""The BM25 index saved beside the Chroma store (bm25s, English stemming and stopwords).

The index is derived data: it is rebuilt from what Chroma stores and swapped in atomically, so
an interrupted import never leaves a half-written index behind. Loaded with mmap so opening a
large library is fast.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections import Counter
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from citefinder.types import Hit, Paper

log = logging.getLogger(__name__)

_IDS = "doc_ids.json"
_MANIFEST = "manifest.json"
CHUNK = 2048
"""Documents turned into arrays at a time while an index is built."""
TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # bm25s.tokenize's default, which queries are split with


def bm25_text(paper: Paper) -> str:
    """The text BM25 indexes: title + authors + venue + abstract."""
    parts = [paper.title, " ".join(paper.authors), paper.venue or "", paper.abstract]
    return "\n".join(p for p in parts if p)


def _chunks(pairs: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    it = iter(pairs)
    while batch := list(islice(it, size)):
        yield batch


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
        return cls.build_stream(zip(doc_ids, texts, strict=True))

    @classmethod
    def build_stream(cls, pairs: Iterable[tuple[str, str]], *, chunk: int = CHUNK) -> "BM25Index":
        """Build from ``(doc_id, text)`` pairs read ``chunk`` at a time, never holding every text.

        What stays in memory is each document's distinct token ids and counts (two small arrays a
        chunk), the vocabulary and each distinct word's stem; the scores are then computed in one pass,
        exactly as ``bm25s.BM25.index`` computes them (the words of ``bm25s.tokenize``, same IDF and TF
        formulas, same sparse layout), so a saved index is an ordinary bm25s index.
        """
        import bm25s
        import numpy as np
        from bm25s.scoring import _select_idf_scorer, _select_tfc_scorer
        from bm25s.stopwords import STOPWORDS_EN

        stem = _stemmer()
        vocab: dict[str, int] = {}
        doc_ids: list[str] = []
        voc_parts: list[Any] = []
        tf_parts: list[Any] = []
        len_parts: list[Any] = []
        width_parts: list[Any] = []
        split = re.compile(TOKEN_PATTERN).findall
        stem_word = stem.stemWord
        # a lower-cased word -> the id of its stem (each word stemmed once); -1 for a stopword
        term_of = dict.fromkeys(STOPWORDS_EN, -1)
        for batch in _chunks(pairs, chunk):
            voc: list[int] = []
            tf: list[int] = []
            lengths: list[int] = []
            widths: list[int] = []
            for doc_id, text in batch:  # bm25s.tokenize's words: lower-cased, split, stopwords out, stemmed
                doc_ids.append(doc_id)
                counts: dict[int, int] = {}
                length = 0
                for word, times in Counter(split(text.lower())).items():
                    tid = term_of.get(word)
                    if tid is None:
                        tid = term_of[word] = vocab.setdefault(stem_word(word), len(vocab))
                    if tid >= 0:
                        counts[tid] = counts.get(tid, 0) + times
                        length += times
                voc.extend(counts)
                tf.extend(counts.values())
                lengths.append(length)
                widths.append(len(counts))
            voc_parts.append(np.asarray(voc, dtype=np.int32))
            tf_parts.append(np.asarray(tf, dtype=np.float32))
            len_parts.append(np.asarray(lengths, dtype=np.float32))
            width_parts.append(np.asarray(widths, dtype=np.int64))
        if not doc_ids:
            return cls(None, [])
        retriever = bm25s.BM25()  # lucene: no non-occurrence array (BM25L and BM25+ would need one)
        voc_flat = np.concatenate(voc_parts)
        del voc_parts
        tf_flat = np.concatenate(tf_parts)
        del tf_parts
        doc_len = np.concatenate(len_parts)
        n_docs, n_vocab = len(doc_ids), len(vocab)
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), np.concatenate(width_parts))
        doc_freq = np.bincount(voc_flat, minlength=n_vocab)
        idf_fn = _select_idf_scorer(retriever.idf_method)
        idf = np.array([idf_fn(int(df), N=n_docs) if df else 0.0 for df in doc_freq.tolist()], dtype=retriever.dtype)
        tfc = _select_tfc_scorer(retriever.method)(
            tf_array=tf_flat,
            l_d=doc_len[doc_of],
            l_avg=float(doc_len.mean()),
            k1=retriever.k1,
            b=retriever.b,
            delta=retriever.delta,
        )
        scores = (idf[voc_flat] * tfc).astype(retriever.dtype)
        del tf_flat, tfc
        order = np.argsort(voc_flat, kind="stable")  # column by column, documents in order within each
        del voc_flat  # (each big array is let go as soon as the next one is made: the peak stays ~4 of them)
        data = scores[order]
        del scores
        indices = doc_of[order].astype(retriever.int_dtype, copy=False)
        del doc_of, order
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        retriever.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}
        if "" not in vocab:  # bm25s keeps an empty token outside the matrix for queries of no known word
            vocab[""] = n_vocab
        retriever.vocab_dict = vocab
        retriever.nonoccurrence_array = None
        retriever.unique_token_ids_set = set(vocab.values())
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
