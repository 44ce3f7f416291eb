"""The pipeline end to end on a real small library (Chroma + bm25s + MiniLM, papers from papers-50k)."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("DSPY_CACHEDIR", os.path.join(tempfile.gettempdir(), "citefinder-test-dspy-cache"))

from citefinder.errors import CitefinderError, EmptyLibraryError, NoSlotsError  # noqa: E402
from citefinder.pipeline.pipeline import Pipeline  # noqa: E402
from citefinder.rank.rerank import SkipReranker  # noqa: E402
from citefinder.retrieve.registry import agent_names
from citefinder.select.llm import LLMSelector  # noqa: E402
from citefinder.types import Slot  # noqa: E402

pytestmark = pytest.mark.slow

TOP = 10


def stages(settings) -> list[str]:
    """reformulate, one trace per configured retrieval agent, fuse, rerank, select."""
    return ["reformulate", *agent_names(settings), "fuse", "rerank", "select"]


def slot_for(text: str) -> Slot:
    start = text.index("[CITATION]")
    return Slot(index=0, start=start, end=start + 10, marker="[CITATION]", sentence=text, context=text)


@pytest.fixture(scope="module")
def pipeline(small_library) -> Pipeline:
    return Pipeline(small_library.settings, small_library.library)


def test_cite_slot_six_traces_and_gold_among_top_candidates(pipeline: Pipeline, small_library):
    items = small_library.citeme
    assert items, "the small library holds no CiteME gold paper"
    found = 0
    for item in items:
        result = pipeline.cite_slot(slot_for(item["text"]))
        assert [t.agent for t in result.traces] == stages(small_library.settings)
        assert [t.agent for t in result.traces if t.kind == "retriever"] == list(agent_names(small_library.settings))
        assert all(t.elapsed_s >= 0 for t in result.traces)
        assert result.trace("rerank").status == "skipped"
        top_ids = [c.doc_id for c in result.candidates[:TOP]]
        found += any(g in top_ids for g in item["gold"])
        if result.selection.status == "found":
            assert result.selection.paper.doc_id in {c.doc_id for c in result.candidates}
            assert small_library.library.get([result.selection.paper.doc_id]) == [result.selection.paper]
        assert result.selection.method == "threshold"
        basis = result.trace("select").details["confidence_basis"]
        assert basis["probability"] == pytest.approx(result.selection.confidence, abs=1e-3)
        assert basis["words"] in ("likely right", "unsure", "unlikely")
        assert "agents put it first" in basis["explanation"]
        # the calibrated rule: found exactly when the top candidate's probability clears the threshold
        threshold = small_library.settings.confidence_threshold
        assert (result.selection.status == "found") == (result.selection.confidence >= threshold)
    # 300 papers: the gold paper should almost always be among the top ten
    assert found / len(items) >= 0.8, f"gold in top {TOP} for {found}/{len(items)} items"


def test_candidates_keep_scores_of_every_stage(pipeline: Pipeline, small_library):
    item = small_library.citeme[0]
    result = pipeline.cite_slot(slot_for(item["text"]))
    top = result.candidates[0]
    assert top.stage("fused").rank == 1
    assert top.stage("bm25") or top.stage("dense")
    assert [c.stage("fused").rank for c in result.candidates] == list(range(1, len(result.candidates) + 1))
    assert len(result.candidates) <= max(small_library.settings.fused_top_n, small_library.settings.rerank_top_n)
    assert [h.doc_id for h in result.trace("fuse").top] == [c.doc_id for c in result.candidates]
    assert result.trace("bm25").params == {"k": small_library.settings.k_bm25}


def test_cite_text_finds_slots_and_reports_progress(pipeline: Pipeline, small_library):
    a, b = small_library.citeme[0]["text"], small_library.citeme[1]["text"]
    calls: list[tuple[int, int, bool]] = []
    results = pipeline.cite_text(
        f"{a}\n\n{b}", progress=lambda done, total, last: calls.append((done, total, last is None))
    )
    assert len(results) >= 2
    assert [r.slot.index for r in results] == list(range(len(results)))
    assert calls[0] == (0, len(results), True) and calls[-1] == (len(results), len(results), False)
    for r in results:
        assert [t.agent for t in r.traces] == stages(pipeline.settings)


def test_text_without_slots_raises(pipeline: Pipeline):
    with pytest.raises(NoSlotsError):
        pipeline.cite_text("A paragraph that cites nothing at all.")


def test_search_ranks_without_slots(pipeline: Pipeline, small_library):
    item = small_library.citeme[0]
    result = pipeline.search(item["text"].replace("[CITATION]", ""))
    assert result.slot is None
    assert [t.agent for t in result.traces] == stages(pipeline.settings)
    assert result.trace("select").status == "skipped"
    assert result.selection.method == "ranking"
    assert result.selection.paper == result.candidates[0].paper


@pytest.mark.llm
def test_llm_selector_answer_is_a_candidate(small_library):
    from dspy.utils.dummies import DummyLM

    settings = small_library.settings.with_overrides(llm_model="hosted_vllm/dummy")
    lm = DummyLM(
        [
            {"reasoning": "r", "selected": "2", "confidence": "0.6"},
            {"reasoning": "r", "selected": "A Paper That Is Not There", "confidence": "0.9"},
        ]
    )
    pipe = Pipeline(settings, small_library.library, reranker=SkipReranker(), selector=LLMSelector(settings, lm=lm))
    item = small_library.citeme[0]
    first = pipe.cite_slot(slot_for(item["text"]))
    assert first.selection.method == "llm" and first.selection.paper == first.candidates[1].paper
    second = pipe.cite_slot(slot_for(item["text"]))
    assert second.trace("select").status == "fallback"
    assert second.selection.paper in (None, second.candidates[0].paper)


class _Broken:
    """The real library with one or both retrievers failing."""

    def __init__(self, library, *, bm25: bool, dense: bool) -> None:
        self._library, self._bm25, self._dense = library, bm25, dense

    def __getattr__(self, name):
        return getattr(self._library, name)

    def bm25_search(self, text, k):
        if self._bm25:
            raise OSError("bm25 index file is corrupt")
        return self._library.bm25_search(text, k)

    @property
    def embedder(self):  # dense retrieval embeds the query first: that is where it fails
        return _Unreachable() if self._dense else self._library.embedder


class _Unreachable:
    def encode(self, texts):
        raise ConnectionError("Chroma server unreachable")


def test_one_retriever_failing_is_recorded(small_library):
    broken = _Broken(small_library.library, bm25=False, dense=True)
    result = Pipeline(small_library.settings, broken).cite_slot(slot_for(small_library.citeme[0]["text"]))
    assert result.trace("dense").status == "error" and "Chroma server unreachable" in result.trace("dense").message
    assert result.trace("bm25").status == "ok" and result.candidates
    assert all(c.stage("dense") is None for c in result.candidates)
    # the confidence reads only the agents that searched: dense is not counted as having disagreed
    basis = result.trace("select").details["confidence_basis"]
    assert "dense" not in basis["ranks"] and basis["features"]["ran_dense"] == 0.0


def test_every_agent_failing_raises(small_library):
    broken = _Broken(small_library.library, bm25=True, dense=True)
    settings = small_library.settings.with_overrides(agents=("bm25", "dense"))
    with pytest.raises(CitefinderError, match="bm25 index file is corrupt.*Chroma server unreachable"):
        Pipeline(settings, broken).cite_slot(slot_for(small_library.citeme[0]["text"]))


def test_empty_library_raises(tmp_path, small_library):
    from citefinder.library.store import Library

    settings = small_library.settings.with_overrides(library=tmp_path / "empty")
    with pytest.raises(EmptyLibraryError):
        Pipeline(settings, Library.open(settings)).cite_text("Transformers [CITATION] changed NLP.")


def test_reranker_reorders_only_its_depth_and_the_fused_order_continues(small_library):
    from citefinder.rank.rerank import BiEncoderRescorer

    settings = small_library.settings.with_overrides(rerank_top_n=3, fused_top_n=12)
    rescorer = BiEncoderRescorer(small_library.library.embedder, name="minilm-rescorer")
    result = Pipeline(settings, small_library.library, reranker=rescorer).cite_slot(
        slot_for(small_library.citeme[0]["text"]))
    cands = result.candidates
    assert result.trace("rerank").status == "ok" and result.trace("rerank").params["blend"] == "rrf"
    assert len(cands) == 12
    assert sorted(c.stage("rerank").rank for c in cands[:3]) == [1, 2, 3]
    assert {c.stage("fused").rank for c in cands[:3]} == {1, 2, 3}  # a permutation of the fused top 3
    assert all(c.stage("rerank") is None for c in cands[3:])
    assert [c.stage("fused").rank for c in cands[3:]] == list(range(4, 13))
