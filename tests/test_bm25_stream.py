"""The BM25 index built a chunk at a time scores exactly as bm25s's own index of the same texts."""

from __future__ import annotations

import gzip
import itertools
import json

import bm25s
import pytest

from citefinder.library.store.bm25index import BM25Index, _stemmer, bm25_text
from citefinder.types import Paper
from conftest import PAPERS_50K


def _papers(n: int) -> list[Paper]:
    if not PAPERS_50K.exists():
        pytest.fail(f"benchmark data missing: {PAPERS_50K} (see shared/DATA.md; set CITEFINDER_SHARED_DATA)")
    with gzip.open(PAPERS_50K, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in itertools.islice(f, n)]
    return [
        Paper(
            r["doc_id"],
            r["title"],
            tuple(r.get("authors") or ()),
            r.get("year"),
            r.get("venue"),
            r.get("abstract") or "",
        )
        for r in rows
    ]


def test_streamed_index_ranks_and_scores_as_bm25s_does(tmp_path) -> None:
    papers = _papers(1500)
    ids = [p.doc_id for p in papers]
    texts = [bm25_text(p) for p in papers]
    texts[3] = ""  # no words at all
    texts[4] = "the of and"  # stopwords only
    texts[5] = "Über naïve CAFÉ-Modelle: 3D U-Nets (2019), x y ÆON re-ranking re-ranking"  # case, accents, digits
    reference = bm25s.BM25()
    reference.index(bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False), show_progress=False)
    expected = BM25Index(reference, ids)
    streamed = BM25Index.build_stream(zip(ids, texts, strict=True), chunk=200)  # eight chunks, the last one short
    streamed.save(tmp_path / "bm25", stamp="s")
    loaded = BM25Index.load(tmp_path / "bm25")

    queries = [p.title for p in papers[500:540]] + ["graph neural networks", "zzqx unseenword", "attention",
                                                    "über café modelle", "re-ranking U-Nets 3d"]
    for query in queries:
        want = expected.search(query, 25)
        for index in (streamed, loaded):
            got = index.search(query, 25)
            assert [h.doc_id for h in got] == [h.doc_id for h in want], query
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5), query
    assert streamed._retriever.scores["data"].shape == reference.scores["data"].shape
    assert len(streamed._retriever.vocab_dict) == len(reference.vocab_dict)


def test_an_empty_stream_gives_an_empty_index() -> None:
    index = BM25Index.build_stream(iter(()))
    assert len(index) == 0 and index.search("anything", 5) == []
