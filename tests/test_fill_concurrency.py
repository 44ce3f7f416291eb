"""Filling many slots against a real OpenAI-compatible server on loopback (tests/llm_server.py):
slots are selected concurrently (``llm_concurrency``) and an LLM that fails twice is not asked again."""

from __future__ import annotations

import time

import pytest

from app_support import build_sample_library
from citefinder.library.store import Library
from citefinder.pipeline.pipeline import Pipeline
from citefinder.select.breaker import MAX_FAILURES
from llm_support import fields, scripted_server

pytestmark = pytest.mark.slow


def draft(n: int) -> str:
    return " ".join(f"Sequence transduction without recurrence, attention is all you need, part {i} [CITATION]."
                    for i in range(n))


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Library:
    from citefinder.config import Settings

    folder = build_sample_library(tmp_path_factory.getbasetemp() / "sample-library")
    return Library.open(Settings(library=folder))


def test_slots_are_selected_concurrently_against_a_slow_llm(tmp_path, library, alone):
    with scripted_server(tmp_path, [{"sleep": 1.0, **fields("1")}]) as llm:
        settings = llm.settings(library=library.path, llm_concurrency=4)
        pipeline = Pipeline(settings, library)
        pipeline.cite_text(draft(1))  # warm-up: models, program
        seen: list[int] = []
        with alone():
            start = time.perf_counter()
            results = pipeline.cite_text(draft(12), progress=lambda done, total, r: seen.append(done))
            elapsed = time.perf_counter() - start
    print(f"\n12 slots, LLM answering in 1 s, 4 at a time: {elapsed:.2f} s")
    assert [r.slot.index for r in results] == list(range(12))  # slot order, whatever finished first
    assert seen == list(range(13))
    assert all(r.selection.method == "llm" and r.selection.paper.title == "Attention Is All You Need" for r in results)
    assert elapsed < 8.0  # one after another: 12 s and more


def test_a_dead_llm_is_asked_twice_then_skipped(tmp_path, library):
    with scripted_server(tmp_path, [{"status": 500, "error": "model crashed"}]) as llm:
        settings = llm.settings(library=library.path, llm_concurrency=1)
        results = Pipeline(settings, library).cite_text(draft(6))
        asked = len(llm.requests())
    traces = [r.trace("select") for r in results]
    assert asked == 2
    assert [bool(t.details.get("llm_error")) for t in traces] == [True, True, False, False, False, False]
    assert all(t.details.get("llm_skipped") for t in traces[2:])
    assert "LLM not asked: it failed 2 times in this fill" in traces[2].message
    assert all(r.selection.method == "threshold" for r in results)


def test_thirty_slots_against_an_unreachable_endpoint_stay_fast(library, alone):
    from citefinder.config import Settings
    from conftest import free_port

    settings = Settings(library=library.path, llm_model="hosted_vllm/nothing",
                        llm_api_base=f"http://127.0.0.1:{free_port()}/v1")  # default retries and concurrency
    pipeline = Pipeline(settings, library)
    with alone():
        start = time.perf_counter()
        results = pipeline.cite_text(draft(30))
        elapsed = time.perf_counter() - start
    print(f"\n30 slots, dead endpoint (default retries {settings.llm_retries}): {elapsed:.2f} s")
    assert len(results) == 30
    failed = sum(bool(r.trace("select").details.get("llm_error")) for r in results)
    # calls already under way when the breaker opens still fail; a slot may also start between the first and
    # the second failure: at most llm_concurrency + (MAX_FAILURES - 1) failed calls, never one per slot
    assert 2 <= failed <= settings.llm_concurrency + MAX_FAILURES - 1
    assert elapsed < 15.0
