"""`citefinder optimize`, the compiled picker and the rewrite agent, on the real small library
against the scripted OpenAI-compatible server (tests/llm_server.py)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("DSPY_CACHEDIR", os.path.join(tempfile.gettempdir(), "citefinder-test-dspy-cache"))

from citefinder.config import Settings  # noqa: E402
from citefinder.evaluate.dataset import EvalItem  # noqa: E402
from citefinder.retrieve.registry import default_agents  # noqa: E402
from citefinder.select.programs import active_program, list_programs, program_info, programs_dir  # noqa: E402
from citefinder.train.optimize import build_examples, exact_match  # noqa: E402
from llm_support import fields, scripted_server  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.slow]  # DSPy, the scripted server, the small library

CORE = ["reformulate", *default_agents(), "fuse", "rerank", "select"]
UNANSWERABLE = EvalItem(
    "made-up-1", "Quantum gravity was finally unified with string cosmology in a single model [CITATION].",
    gold=(), answerable=False,
)


@pytest.fixture(scope="module")
def library_copy(small_library, tmp_path_factory):
    """A private copy of the session's small library: this module writes programs into it."""
    from citefinder.library.store import Library

    dest = tmp_path_factory.mktemp("optimize") / "library"
    shutil.copytree(small_library.library.path, dest)
    settings = Settings(library=dest)
    return Library.open(settings), settings, small_library.citeme


def items_of(citeme: list[dict], n: int) -> list[EvalItem]:
    return [EvalItem(i["id"], i["text"], tuple(i["gold"]), tuple(i.get("gold_titles") or ()), True, i.get("split"))
            for i in citeme[:n]]


def write_jsonl(path, items: list[EvalItem]) -> None:
    path.write_text("\n".join(json.dumps({"id": i.id, "text": i.text, "gold": list(i.gold),
                                          "answerable": i.answerable}) for i in items), encoding="utf-8")


def test_examples_hold_the_gold_among_shuffled_candidates(library_copy):
    library, settings, citeme = library_copy
    settings = settings.with_overrides(select_candidates=5)
    items = items_of(citeme, 6) + [UNANSWERABLE]
    examples, skipped = build_examples(items, settings, library, seed=3)
    again, _ = build_examples(items, settings, library, seed=3)
    assert examples == again and skipped == []  # deterministic
    for item, ex in zip(items, examples, strict=False):
        assert len(ex.papers) == 5 and len({p.doc_id for p in ex.papers}) == 5
        assert [ex.papers[n - 1].doc_id in item.gold for n in ex.gold_numbers] == [True] * len(ex.gold_numbers)
        assert bool(ex.gold_numbers) == bool(item.gold)
    assert examples[-1].answer == "none"
    assert len({ex.gold_numbers[0] for ex in examples[:-1]}) > 1  # shuffled: the answer is not always 1


def test_balance_caps_abstentions_and_shuffles():
    from citefinder.train.optimize import TrainingExample, balance

    answerable = [TrainingExample(f"a{i}", "c", (), (1,)) for i in range(2)]
    abstain = [TrainingExample(f"n{i}", "c", (), ()) for i in range(6)]
    kept, dropped = balance(abstain + answerable, seed=1)
    assert sorted(e.item_id for e in kept if e.gold_numbers) == ["a0", "a1"]
    assert sum(1 for e in kept if not e.gold_numbers) == 2 and len(dropped) == 4
    assert "more abstention examples than answerable ones (kept 2)" in dropped[0]
    assert balance(abstain + answerable, seed=1) == (kept, dropped)
    assert len(balance(abstain, seed=0)[0]) == 1


def test_exact_match_metric():
    import dspy

    ex = dspy.Example(titles=["Attention Is All You Need", "Deep Residual Learning"], gold_numbers=[2])
    assert exact_match(ex, dspy.Prediction(selected="2"))
    assert exact_match(ex, dspy.Prediction(selected="deep residual learning"))
    assert not exact_match(ex, dspy.Prediction(selected="1"))
    assert not exact_match(ex, dspy.Prediction(selected="none"))
    assert exact_match(dspy.Example(titles=["A"], gold_numbers=[]), dspy.Prediction(selected="None of these"))


def test_optimize_saves_a_program_the_selector_reloads_and_uses(library_copy, tmp_path):
    from citefinder.cli.main import main
    from citefinder.pipeline.pipeline import Pipeline

    library, settings, citeme = library_copy
    items = items_of(citeme, 4) + [UNANSWERABLE]
    data = tmp_path / "labeled.jsonl"
    write_jsonl(data, items)
    examples, _ = build_examples(items, settings, library, seed=0)
    good, wrong, bad = examples[:2], examples[2], examples[3]
    rules = [{"match": ex.context, **fields(ex.answer, reasoning=f"Bootstrapped reasoning {ex.item_id}.")}
             for ex in good + [examples[4]]]
    wrong_number = next(n for n in range(1, 11) if n not in wrong.gold_numbers)
    rules += [{"match": wrong.context, **fields(str(wrong_number))},
              {"match": bad.context, "content": "I am not sure."}]
    out = tmp_path / "program.json"
    shutil.rmtree(programs_dir(settings.library), ignore_errors=True)  # other tests compile into this copy
    assert active_program(settings.library) is None

    with scripted_server(tmp_path, rules) as s:
        code = main(["optimize", "--examples", str(data), "--library", str(settings.library), "--demos", "3",
                     "--llm-model", "hosted_vllm/scripted", "--llm-api-base", s.base_url, "-o", str(out)])
        n_requests = len(s.requests())
    assert code == 0
    (program,) = list_programs(settings.library)
    assert active_program(settings.library) == program and out.read_bytes() == program.read_bytes()
    info = program_info(program)
    assert (info["optimizer"], info["examples"], info["abstain_examples"], info["demos"]) == ("bootstrap", 5, 1, 3)
    assert info["bootstrapped_demos"] == 3 and info["model"] == "hosted_vllm/scripted"
    demos = json.loads(program.read_text())["predict"]["demos"]
    # only the answers the metric accepted became demos: the two right picks and the abstention
    assert sorted(d["reasoning"] for d in demos) == sorted(
        f"Bootstrapped reasoning {ex.item_id}." for ex in good + [examples[4]])
    # bootstrapping stops at the third accepted answer (the order is shuffled): at most every example once,
    # the malformed one twice (DSPy's JSON retry)
    assert 3 <= n_requests <= 2 + 1 + 1 + 2

    # the selector loads the newest program by itself and names it in the trace
    item = items[0]
    with scripted_server(tmp_path, [fields("3", reasoning="Compiled pick.")]) as s:
        llm_settings = s.settings(library=settings.library)
        (result,) = Pipeline(llm_settings, library).cite_text(item.text)
        prompt = "".join(m["content"] for m in s.requests()[0]["body"]["messages"])
    t = result.trace("select")
    assert [x.agent for x in result.traces] == CORE
    assert t.status == "ok" and t.details["program"] == program.name
    assert t.details["pick"]["number"] == 3 and result.selection.paper == result.candidates[2].paper
    assert t.details["reasoning"] == "Compiled pick." and t.details["prompt_tokens"] > 0
    assert f"Bootstrapped reasoning {good[0].item_id}." in prompt  # the compiled demos are in the prompt

    # the plain prompt on request
    with scripted_server(tmp_path, [fields("1")]) as s:
        (result,) = Pipeline(s.settings(library=settings.library, llm_program="none"), library).cite_text(item.text)
    assert result.trace("select").details["program"] is None


def test_optimize_reports_excerpts_it_cannot_use(library_copy, tmp_path):
    from citefinder.errors import InputError
    from citefinder.train.optimize import optimize

    library, settings, _ = library_copy
    missing = EvalItem("gone", "A paper we do not have [CITATION].", gold=("arxiv:0000.00000",))
    with scripted_server(tmp_path, []) as s, pytest.raises(InputError, match="gone: none of its gold papers"):
        optimize(s.settings(library=settings.library), [missing], library)


def test_mipro_compiles_with_the_scripted_server(library_copy, tmp_path):
    from citefinder.train.optimize import optimize

    library, settings, citeme = library_copy
    items = items_of(citeme, 4)
    examples, _ = build_examples(items, settings, library, seed=0)
    # picker calls answer right; MIPROv2's own calls (data summary, instruction proposals) get placeholders
    rules = [{"match": f"[[ ## citation_context ## ]]\n{ex.context}", **fields(ex.answer)} for ex in examples]
    rules.append({"auto": True})
    with scripted_server(tmp_path, rules) as s:
        report = optimize(s.settings(library=settings.library), items, library, optimizer="mipro", demos=1)
    assert report.program.exists() and report.optimizer == "mipro" and program_info(report.program)["demos"] <= 1
    assert report.metric_calls > len(items)  # bootstrapping plus the trials on the validation split
    assert active_program(settings.library) == report.program


def test_rewrite_agent_adds_llm_queries_after_reformulate(library_copy, tmp_path):
    from citefinder.pipeline.pipeline import Pipeline

    library, settings, citeme = library_copy
    text = citeme[0]["text"]
    rewrite = {"match": "keyword_query", "fields": {
        "keyword_query": "convolutional networks images", "claim_query": "raw images fed through convolutions",
        "method_query": "convolutional neural network"}}
    with scripted_server(tmp_path, [rewrite, fields("none")]) as s:
        (result,) = Pipeline(s.settings(library=settings.library, llm_rewrite=True), library).cite_text(text)
    assert [t.agent for t in result.traces] == ["reformulate", "rewrite"] + CORE[1:]
    t = result.trace("rewrite")
    assert t.status == "ok" and t.details["prompt_tokens"] > 0
    assert result.query.variants == ("convolutional networks images", "raw images fed through convolutions",
                                     "convolutional neural network")
    assert sorted(result.trace("bm25").details["variants"]) == ["bm25#1", "bm25#2", "bm25#3"]
    # bm25 and dense search the query and its 3 variants; the other agents that found something, once each
    others = [t for t in result.traces if t.kind == "retriever" and t.agent not in ("bm25", "dense") and t.top]
    assert result.trace("fuse").params["n_lists"] == 2 * 4 + len(others)
    assert result.selection.status == "not_found" and result.trace("select").status == "ok"


def test_rewrite_failure_keeps_the_cleaned_query(library_copy, tmp_path):
    from citefinder.pipeline.pipeline import Pipeline

    library, settings, citeme = library_copy
    with scripted_server(tmp_path, [{"match": "keyword_query", "status": 500}, fields("1")]) as s:
        (result,) = Pipeline(s.settings(library=settings.library, llm_rewrite=True), library).cite_text(
            citeme[0]["text"])
    t = result.trace("rewrite")
    assert t.status == "fallback" and "HTTP 500" in t.message and result.query.variants == ()
    assert result.trace("select").status == "ok"


def test_rewrite_is_off_by_default_and_skipped_without_an_llm(library_copy):
    from citefinder.pipeline.pipeline import Pipeline

    library, settings, citeme = library_copy
    assert Settings().llm_rewrite is False
    (result,) = Pipeline(settings, library).cite_text(citeme[0]["text"])
    assert [t.agent for t in result.traces] == CORE
    (result,) = Pipeline(settings.with_overrides(llm_rewrite=True), library).cite_text(citeme[0]["text"])
    assert [t.agent for t in result.traces] == ["reformulate", "rewrite"] + CORE[1:]
    assert result.trace("rewrite").status == "skipped"
