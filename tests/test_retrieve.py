"""The retrieval agents' shared runner: variants, failures and empty queries end up in the trace."""

from __future__ import annotations

from citefinder.retrieve.base import run_agent
from citefinder.types import Hit, Query


class Toy:
    """A retrieval agent in a few lines: what the protocol asks of a plugin."""

    def __init__(self, name: str = "bm25", k: int = 2, uses_variants: bool = True) -> None:
        self.name, self.k, self.uses_variants = name, k, uses_variants

    def skip_reason(self, query: Query) -> str | None:
        return None if query.text.strip() else "empty query"

    def search(self, query: Query) -> list[Hit]:
        if "boom" in query.text:
            raise RuntimeError("index unavailable")
        return [Hit(f"{query.text}-{i}", i, 1.0 / i) for i in range(1, self.k + 1)]


def test_main_query_and_variants_are_retrieved_separately():
    rankings, trace = run_agent(Toy(), Query("q", variants=("v1", "v2")))
    assert list(rankings) == ["bm25", "bm25#1", "bm25#2"]
    assert [h.doc_id for h in rankings["bm25#2"]] == ["v2-1", "v2-2"]
    assert trace.agent == "bm25" and trace.status == "ok" and trace.kind == "retriever"
    assert [h.doc_id for h in trace.top] == ["q-1", "q-2"]
    assert set(trace.details["variants"]) == {"bm25#1", "bm25#2"}
    assert trace.params == {"k": 2}


def test_an_agent_without_variants_searches_once():
    rankings, _ = run_agent(Toy("names", uses_variants=False), Query("q", variants=("v1",)))
    assert list(rankings) == ["names"]


def test_a_failing_variant_is_recorded_not_raised():
    rankings, trace = run_agent(Toy("dense", k=1), Query("q", variants=("boom",)))
    assert list(rankings) == ["dense"]
    assert trace.status == "ok" and "dense#1: RuntimeError: index unavailable" in trace.message


def test_all_failing_is_an_error_with_empty_rankings():
    rankings, trace = run_agent(Toy("dense", k=1), Query("boom"))
    assert rankings == {} and trace.status == "error" and trace.top == ()
    assert "index unavailable" in trace.message


def test_nothing_to_search_is_skipped_with_the_agents_reason():
    rankings, trace = run_agent(Toy(k=5), Query("  "))
    assert rankings == {} and trace.status == "skipped" and "empty query" in trace.message
