"""The select agent: DSPy answers scripted with DummyLM, mapped to candidates or falling back."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

os.environ.setdefault("DSPY_CACHEDIR", os.path.join(tempfile.gettempdir(), "citefinder-test-dspy-cache"))

from citefinder.config import Settings  # noqa: E402
from citefinder.select.base import make_selector  # noqa: E402
from citefinder.select.fallback import ThresholdSelector  # noqa: E402
from citefinder.select.llm import LLMSelector, interpret  # noqa: E402
from citefinder.types import Candidate, Paper, Query  # noqa: E402

PAPERS = [
    Paper(
        "arxiv:1706.03762",
        "Attention Is All You Need",
        ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit"),
        2017,
        "NeurIPS",
        abstract="The dominant sequence transduction models are based on recurrent networks. " * 20,
    ),
    Paper(
        "arxiv:1810.04805",
        "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        ("Jacob Devlin",),
        2019,
        "NAACL",
        abstract="We introduce BERT.",
    ),
    Paper(
        "t:lecun89",
        "Backpropagation Applied to Handwritten Zip Code Recognition",
        ("Yann LeCun",),
        1989,
        abstract="Convolutional networks read zip codes.",
    ),
]
CANDS = tuple(Candidate(p).with_score("fused", i, 1 / (60 + i)) for i, p in enumerate(PAPERS, start=1))
CONF = {"arxiv:1706.03762": 0.83, "arxiv:1810.04805": 0.4, "t:lecun89": 0.1}
CONTEXT = "The Transformer [CITATION] relies entirely on self-attention."
QUERY = Query("The Transformer relies entirely on self-attention.")


def llm_selector(*answers: dict, threshold: float = 0.5) -> LLMSelector:
    from dspy.utils.dummies import DummyLM

    settings = Settings(llm_model="hosted_vllm/dummy", confidence_threshold=threshold, abstract_chars=100)
    return LLMSelector(settings, lm=DummyLM(list(answers)))


def answer(selected: str, confidence: str = "0.9") -> dict:
    return {"reasoning": "The passage describes the Transformer.", "selected": selected, "confidence": confidence}


@pytest.mark.llm
@pytest.mark.parametrize(
    ("selected", "doc_id", "how"),
    [
        ("1", "arxiv:1706.03762", "number"),
        ("[2]", "arxiv:1810.04805", "number"),
        ("Candidate 3", "t:lecun89", "number"),
        ("attention is all you need", "arxiv:1706.03762", "title"),
        ("Backpropagation Applied to Handwritten Zipcode Recognition.", "t:lecun89", "fuzzy title"),
    ],
)
def test_llm_picks_by_number_title_or_fuzzy_title(selected: str, doc_id: str, how: str):
    selection, trace = llm_selector(answer(selected)).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.status == "found" and selection.method == "llm"
    assert selection.paper.doc_id == doc_id
    assert selection.confidence == pytest.approx(0.9)
    assert selection.reasoning == "The passage describes the Transformer."
    assert trace.agent == "select" and trace.status == "ok" and how in trace.message
    assert trace.details["raw_answer"] == selected
    assert trace.inputs["context"] == CONTEXT


@pytest.mark.llm
@pytest.mark.parametrize("selected", ["none", "None of these", "NONE OF THE ABOVE."])
def test_llm_none_is_not_found(selected: str):
    selection, trace = llm_selector(answer(selected, "0.7")).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.status == "not_found" and selection.paper is None and selection.method == "llm"
    assert trace.status == "ok" and "none" in trace.message


@pytest.mark.llm
def test_title_not_in_the_list_is_never_returned():
    selector = llm_selector(answer("Deep Residual Learning for Image Recognition"))
    selection, trace = selector.select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.method == "threshold"  # fell back: the top candidate (0.83 >= 0.5)
    assert selection.paper in PAPERS and selection.paper.doc_id == "arxiv:1706.03762"
    assert trace.status == "fallback" and "matches no candidate" in trace.message
    assert trace.details["raw_answer"] == "Deep Residual Learning for Image Recognition"


@pytest.mark.llm
def test_out_of_range_number_falls_back_below_threshold():
    selection, trace = llm_selector(answer("7"), threshold=0.9).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.status == "not_found" and selection.method == "threshold"
    assert trace.status == "fallback" and "out of range 1-3" in trace.message and "below threshold" in trace.message


@pytest.mark.llm
def test_malformed_answer_falls_back():
    # No output fields at all: DSPy cannot parse it (also after its JSON retry), the selector falls back.
    selector = llm_selector({"unexpected": "I think it is the first one"}, {"unexpected": "still not a field"})
    selection, trace = selector.select(QUERY, CANDS, CONF, context=CONTEXT)
    assert trace.status == "fallback" and "malformed LLM answer" in trace.message
    assert selection.method == "threshold" and selection.paper.doc_id == "arxiv:1706.03762"
    assert trace.details["llm_calls"] == 2  # ChatAdapter, then DSPy's JSON retry


@pytest.mark.llm
def test_prompt_holds_numbered_candidates_with_truncated_abstracts():
    from dspy.utils.dummies import DummyLM

    lm = DummyLM([answer("1")])
    settings = Settings(llm_model="hosted_vllm/dummy", abstract_chars=100)
    _, trace = LLMSelector(settings, lm=lm).select(QUERY, CANDS, CONF, context=CONTEXT)
    from dspy.clients.base_lm import GLOBAL_HISTORY  # the selector calls a copy of the LM (its own history)

    messages = [str(m["content"]) for m in GLOBAL_HISTORY[-1]["messages"]]
    prompt = "\n".join(messages)
    assert trace.details["prompt_chars"] == sum(map(len, messages)) and trace.details["llm_calls"] == 1
    assert "[1] Attention Is All You Need (2017, NeurIPS) — Ashish Vaswani, Noam Shazeer, Niki Parmar et al." in prompt
    assert "[3] Backpropagation Applied to Handwritten Zip Code Recognition (1989) — Yann LeCun." in prompt
    assert "recurrent networks. The dominant…" in prompt or "…" in prompt
    assert PAPERS[0].abstract not in prompt
    assert CONTEXT in prompt


@pytest.mark.llm
def test_only_select_candidates_are_shown():
    from dspy.utils.dummies import DummyLM

    settings = Settings(llm_model="hosted_vllm/dummy", select_candidates=2)
    selection, trace = LLMSelector(settings, lm=DummyLM([answer("3")])).select(QUERY, CANDS, CONF)
    assert trace.status == "fallback" and "out of range 1-2" in trace.message
    assert len(trace.top) == 2


def test_interpret_never_leaves_the_list():
    assert interpret("", CANDS).kind == "bad"
    assert interpret("0", CANDS).kind == "bad"
    assert interpret("3D Gaussian Splatting", CANDS).kind == "bad"
    assert interpret("Attention Is All You Need (2017)", CANDS).kind == "pick"


def test_threshold_selector_above_and_below():
    selection, trace = ThresholdSelector(0.5).select(QUERY, CANDS, CONF)
    assert selection.status == "found" and selection.paper == PAPERS[0] and selection.method == "threshold"
    assert selection.confidence == pytest.approx(0.83)
    assert trace.message == "no LLM configured: selected the top fused candidate (confidence 0.83 >= 0.50)"

    selection, trace = ThresholdSelector(0.9).select(QUERY, CANDS, CONF)
    assert selection.status == "not_found" and selection.paper is None
    assert trace.message.startswith("no LLM configured") and trace.message.endswith("below threshold 0.90: not found")


def test_threshold_selector_names_the_reranked_candidate():
    reranked = tuple(c.with_score("rerank", i, 2.0 - i) for i, c in enumerate(CANDS, start=1))
    _, trace = ThresholdSelector(0.5).select(QUERY, reranked, CONF)
    assert trace.message == "no LLM configured: selected the top reranked candidate (confidence 0.83 >= 0.50)"


def test_threshold_selector_without_candidates():
    selection, trace = ThresholdSelector(0.5).select(QUERY, (), {})
    assert selection.status == "not_found" and trace.status == "ok"


def test_make_selector():
    assert isinstance(make_selector(Settings(llm_model=None)), ThresholdSelector)
    selector = make_selector(Settings(llm_model="hosted_vllm/smollm2", confidence_threshold=0.7))
    assert isinstance(selector, LLMSelector) and selector.fallback.threshold == 0.7


class _ChatServer(ThreadingHTTPServer):
    """A minimal OpenAI-compatible /v1/chat/completions endpoint with a scripted reply."""

    def __init__(self, content: str) -> None:
        super().__init__(("127.0.0.1", 0), _ChatHandler)
        self.content = content
        self.requests: list[dict] = []


class _ChatHandler(BaseHTTPRequestHandler):
    server: _ChatServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "body": body})
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": self.server.content}}
            ],
            "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def chat_server():
    server = _ChatServer(
        "[[ ## reasoning ## ]]\nThe passage names BERT.\n\n[[ ## selected ## ]]\n2\n\n"
        "[[ ## confidence ## ]]\n0.8\n\n[[ ## completed ## ]]"
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.mark.llm
def test_real_wire_path_to_an_openai_compatible_server(chat_server: _ChatServer):
    host, port = chat_server.server_address[:2]
    settings = Settings(
        llm_model="hosted_vllm/smollm2",
        llm_api_base=f"http://{host}:{port}/v1",
        llm_max_tokens=64,
        llm_timeout_s=10,
        llm_retries=0,
    )
    selection, trace = LLMSelector(settings).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.status == "found" and selection.paper == PAPERS[1] and selection.method == "llm"
    assert selection.confidence == pytest.approx(0.8) and selection.reasoning == "The passage names BERT."
    assert trace.status == "ok"
    assert (trace.details["prompt_tokens"], trace.details["completion_tokens"]) == (321, 12)
    (request,) = chat_server.requests
    assert request["path"].endswith("/chat/completions")
    assert request["body"]["model"] == "smollm2"
    assert request["body"].get("max_tokens") == 64  # llama.cpp's server ignores max_completion_tokens
    assert request["body"]["temperature"] == 0.0


@pytest.mark.llm
def test_unreachable_llm_falls_back():
    settings = Settings(
        llm_model="hosted_vllm/nothing", llm_api_base="http://127.0.0.1:9/v1", llm_retries=0, llm_timeout_s=5,
        confidence_threshold=0.55,  # the fallback's rule, below the top candidate's 0.83
    )
    selection, trace = LLMSelector(settings).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert trace.status == "fallback" and "LLM endpoint unreachable" in trace.message
    assert selection.method == "threshold" and selection.paper == PAPERS[0]


@pytest.mark.llm
def test_missing_program_file_uses_the_plain_prompt_and_says_why(tmp_path):
    from dspy.utils.dummies import DummyLM

    settings = Settings(llm_model="hosted_vllm/dummy", library=tmp_path, llm_program=str(tmp_path / "gone.json"))
    selection, trace = LLMSelector(settings, lm=DummyLM([answer("2")])).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert selection.paper == PAPERS[1] and trace.status == "ok"
    assert trace.details["program"] is None and "is not a file" in trace.details["program_error"]


def test_llm_selector_without_dspy_falls_back_and_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dspy", None)  # `import dspy` now fails as if it were not installed
    settings = Settings(llm_model="hosted_vllm/smollm2", confidence_threshold=0.5)
    selection, trace = LLMSelector(settings).select(QUERY, CANDS, CONF, context=CONTEXT)
    assert trace.status == "fallback" and "pip install 'citefinder[llm]'" in trace.message
    assert selection.method == "threshold" and selection.paper == PAPERS[0]
