"""The LLM selector against a scripted OpenAI-compatible server process: exact behaviour per answer.

Each test starts tests/llm_server.py on a free loopback port with the replies it needs and talks to
it through DSPy (``dspy.LM``, LiteLLM) and, once, the ``openai`` client.
"""

from __future__ import annotations

import os
import tempfile
import time

import pytest

os.environ.setdefault("DSPY_CACHEDIR", os.path.join(tempfile.gettempdir(), "citefinder-test-dspy-cache"))

from citefinder.llm.lm import usage_summary  # noqa: E402
from citefinder.select.llm import LLMSelector  # noqa: E402
from citefinder.types import Candidate, Paper, Query  # noqa: E402
from llm_support import fields, scripted_server  # noqa: E402

pytestmark = pytest.mark.llm  # a scripted OpenAI-compatible server process, through DSPy

PAPERS = [
    Paper("arxiv:1706.03762", "Attention Is All You Need", ("Ashish Vaswani",), 2017, "NeurIPS",
          abstract="We propose the Transformer, based solely on attention mechanisms. " * 30),
    Paper("arxiv:1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          ("Jacob Devlin",), 2019, "NAACL", abstract="We introduce BERT."),
    Paper("arxiv:1512.03385", "Deep Residual Learning for Image Recognition", ("Kaiming He",), 2016, "CVPR",
          abstract="Residual networks are easier to optimize."),
]
CANDS = tuple(Candidate(p).with_score("fused", i, 1 / (60 + i)) for i, p in enumerate(PAPERS, start=1))
CONF = {"arxiv:1706.03762": 0.83, "arxiv:1810.04805": 0.4, "arxiv:1512.03385": 0.1}
CONTEXT = "The Transformer [CITATION] relies entirely on self-attention."
QUERY = Query("The Transformer relies entirely on self-attention.")


def select(served, **changes):
    # the fallback's own threshold, fixed here (not the shipped default): 0.83 is auto-filled, 0.4 is not
    changes.setdefault("confidence_threshold", 0.5)
    return LLMSelector(served.settings(**changes)).select(QUERY, CANDS, CONF, context=CONTEXT)


def test_openai_client_talks_to_the_scripted_server(tmp_path):
    from openai import OpenAI

    with scripted_server(tmp_path, [{"content": "hello", "usage": {"prompt_tokens": 5, "completion_tokens": 1}}]) as s:
        client = OpenAI(base_url=s.base_url, api_key="no-key", timeout=10, max_retries=0)
        reply = client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "hi"}],
                                               max_tokens=8)
        assert reply.choices[0].message.content == "hello"
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (5, 1)
        assert [m.id for m in client.models.list()] == ["scripted"]


def test_pick_by_number_traces_prompt_tokens_reasoning_and_the_mapped_candidate(tmp_path):
    rule = fields("2", reasoning="The passage is about BERT.", confidence="0.8")
    rule["usage"] = {"prompt_tokens": 700, "completion_tokens": 30}
    with scripted_server(tmp_path, [rule]) as s:
        selection, trace = select(s, abstract_chars=120)
        (request,) = s.requests()
    assert selection.status == "found" and selection.method == "llm" and selection.paper == PAPERS[1]
    assert selection.confidence == pytest.approx(0.8) and selection.reasoning == "The passage is about BERT."
    assert trace.status == "ok" and trace.message == "LLM selected [2] by number (confidence 0.80)"
    d = trace.details
    assert d["pick"] == {"number": 2, "doc_id": "arxiv:1810.04805", "title": PAPERS[1].title, "how": "number"}
    assert d["reasoning"] == "The passage is about BERT." and d["raw_answer"] == "2"
    assert (d["llm_calls"], d["prompt_tokens"], d["completion_tokens"]) == (1, 700, 30)
    assert d["calls"] == [{"prompt_chars": d["prompt_chars"], "prompt_tokens": 700, "completion_tokens": 30}]
    assert usage_summary(d) == (f"1 LLM call · prompt {d['prompt_chars']:,} chars, 700 tokens · completion 30 tokens"
                                " · answer '2' -> [2] arxiv:1810.04805 by number")
    prompt = "".join(m["content"] for m in request["body"]["messages"])
    assert d["prompt_chars"] == len(prompt) and d["program"] is None
    # numbered candidates, abstracts cut at abstract_chars, token cap sent as max_tokens
    assert "[1] Attention Is All You Need (2017, NeurIPS)" in prompt and "[3] Deep Residual Learning" in prompt
    assert PAPERS[0].abstract[:200] not in prompt and "…" in prompt
    assert request["body"]["model"] == "scripted" and request["body"]["max_tokens"] == 256
    assert "max_completion_tokens" not in request["body"]


def test_pick_by_title(tmp_path):
    with scripted_server(tmp_path, [fields("Deep residual learning for image recognition")]) as s:
        selection, trace = select(s)
    assert selection.paper == PAPERS[2] and trace.details["pick"]["how"] == "title"


def test_title_outside_the_list_is_never_returned(tmp_path):
    with scripted_server(tmp_path, [fields("Language Models are Few-Shot Learners")]) as s:
        selection, trace = select(s, confidence_threshold=0.9)
    assert selection.status == "not_found" and selection.paper is None and selection.method == "threshold"
    assert trace.status == "fallback" and "matches no candidate" in trace.message
    assert "pick" not in trace.details


def test_none_of_these_abstains(tmp_path):
    with scripted_server(tmp_path, [fields("none of these", confidence="0.7")]) as s:
        selection, trace = select(s)
    assert selection.status == "not_found" and selection.paper is None and selection.method == "llm"
    assert trace.status == "ok" and "none of the candidates" in trace.message


def test_malformed_output_falls_back(tmp_path):
    with scripted_server(tmp_path, [{"content": "I think it is probably the first paper, yes."}]) as s:
        selection, trace = select(s)
        n_requests = len(s.requests())
    assert trace.status == "fallback" and "malformed LLM answer" in trace.message
    assert selection.method == "threshold" and selection.paper == PAPERS[0]  # 0.83 >= 0.5
    assert n_requests == trace.details["llm_calls"] == 2  # DSPy retries once in JSON mode


def test_out_of_range_number_falls_back(tmp_path):
    with scripted_server(tmp_path, [fields("7")]) as s:
        selection, trace = select(s)
    assert trace.status == "fallback" and "out of range 1-3" in trace.message
    assert selection.paper == PAPERS[0] and selection.method == "threshold"


def test_timeout_falls_back(tmp_path):
    with scripted_server(tmp_path, [{**fields("2"), "sleep": 5}]) as s:
        start = time.perf_counter()
        selection, trace = select(s, llm_timeout_s=1.0)
        elapsed = time.perf_counter() - start
    assert trace.status == "fallback" and "timed out after 1 s" in trace.message
    assert selection.method == "threshold" and elapsed < 4.5


def test_slow_server_within_the_timeout(tmp_path):
    with scripted_server(tmp_path, [{**fields("3"), "sleep": 1.5}]) as s:
        selection, trace = select(s, llm_timeout_s=10.0)
    assert selection.paper == PAPERS[2] and trace.status == "ok" and trace.elapsed_s >= 1.5


@pytest.mark.parametrize("status", [429, 500])
def test_transient_error_is_retried(tmp_path, status):
    with scripted_server(tmp_path, [{"status": status, "times": 1, "retry_after": 0}, fields("2")]) as s:
        selection, trace = select(s, llm_retries=2)
        rules = [r["rule"] for r in s.requests()]
    assert selection.paper == PAPERS[1] and trace.status == "ok"
    assert rules == [0, 1]


@pytest.mark.parametrize(("status", "said"), [(429, "rate limited (HTTP 429) after 1 retry"), (500, "HTTP 500")])
def test_persistent_error_falls_back_after_the_retries(tmp_path, status, said):
    with scripted_server(tmp_path, [{"status": status, "retry_after": 0}]) as s:
        selection, trace = select(s, llm_retries=1)
        n_requests = len(s.requests())
    assert trace.status == "fallback" and said in trace.message
    assert selection.method == "threshold" and selection.paper == PAPERS[0]
    assert n_requests == 2


def test_only_select_candidates_are_sent(tmp_path):
    with scripted_server(tmp_path, [fields("1")]) as s:
        selection, trace = select(s, select_candidates=2)
        prompt = "".join(m["content"] for m in s.requests()[0]["body"]["messages"])
    assert "[2] BERT" in prompt and "[3]" not in prompt and len(trace.top) == 2


def test_usage_missing_is_not_invented(tmp_path):
    with scripted_server(tmp_path, [{**fields("1"), "usage": False}]) as s:
        _, trace = select(s)
    assert trace.details["llm_calls"] == 1 and trace.details["prompt_chars"] > 0
    assert "prompt_tokens" not in trace.details
