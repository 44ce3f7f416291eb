"""The retriever agents' shared runner: variants, failures and empty queries end up in the trace."""

from __future__ import annotations

from citefinder.retrieve.common import run_retriever
from citefinder.types import Hit, Query


def search(text: str, k: int) -> list[Hit]:
    if "boom" in text:
        raise RuntimeError("index unavailable")
    return [Hit(f"{text}-{i}", i, 1.0 / i) for i in range(1, k + 1)]


def test_main_query_and_variants_are_retrieved_separately():
    rankings, trace = run_retriever("bm25", search, Query("q", variants=("v1", "v2")), k=2)
    assert list(rankings) == ["bm25", "bm25#1", "bm25#2"]
    assert [h.doc_id for h in rankings["bm25#2"]] == ["v2-1", "v2-2"]
    assert trace.agent == "bm25" and trace.status == "ok"
    assert [h.doc_id for h in trace.top] == ["q-1", "q-2"]
    assert set(trace.details["variants"]) == {"bm25#1", "bm25#2"}
    assert trace.params == {"k": 2}


def test_a_failing_variant_is_recorded_not_raised():
    rankings, trace = run_retriever("dense", search, Query("q", variants=("boom",)), k=1)
    assert list(rankings) == ["dense"]
    assert trace.status == "ok" and "dense#1: RuntimeError: index unavailable" in trace.message


def test_all_failing_is_an_error_with_empty_rankings():
    rankings, trace = run_retriever("dense", search, Query("boom"), k=1)
    assert rankings == {} and trace.status == "error" and trace.top == ()
    assert "index unavailable" in trace.message


def test_empty_query_is_skipped():
    rankings, trace = run_retriever("bm25", search, Query("  "), k=5)
    assert rankings == {} and trace.status == "skipped"
