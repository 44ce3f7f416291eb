"""Evaluation harness: metrics on hand-computed runs, and a real evaluation on the small library."""

from __future__ import annotations

import json
import math

import pytest

from citefinder.evaluate.dataset import EvalItem, load_items
from citefinder.evaluate.metrics import evaluate_run, ndcg_at_k, ranking, recall_at_k, reciprocal_rank
from citefinder.evaluate.runner import title_match
from citefinder.retrieve.registry import agent_names


def test_metrics_on_hand_computed_run() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"x": 1}, "q3": {"n": 0}}
    run = {"q1": {"c": 0.9, "a": 0.8, "d": 0.7, "b": 0.1}, "q2": {"y": 1.0}}
    m = evaluate_run(qrels, run, ks=(1, 2, 4))
    assert m["queries"] == 2  # q3 has nothing relevant and is not counted
    assert m["recall@1"] == 0.0
    assert m["recall@2"] == pytest.approx((0.5 + 0) / 2)
    assert m["recall@4"] == pytest.approx((1.0 + 0) / 2)
    assert m["mrr"] == pytest.approx((1 / 2 + 0) / 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert m["ndcg@10"] == pytest.approx((dcg / idcg) / 2)


def test_ranking_breaks_ties_by_doc_id() -> None:
    assert ranking({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]
    assert recall_at_k({"a": 1}, ["b", "a"], 1) == 0.0
    assert reciprocal_rank({"a": 1}, ["b", "c", "a"]) == pytest.approx(1 / 3)
    assert ndcg_at_k({"a": 1}, ["a"]) == 1.0


def test_title_match_is_the_official_citeme_rule() -> None:
    assert title_match("Attention is all you need", ["Attention Is All You Need."])
    assert not title_match("Attention is not all you need at all, really", ["Attention Is All You Need"])
    assert not title_match(None, ["x"])


def test_load_items_filters_split_and_limit(tmp_path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text("\n".join(json.dumps(d) for d in [
        {"id": "1", "text": "a [CITATION]", "gold": ["x"], "split": "train", "answerable": True},
        {"id": "2", "text": "b [CITATION]", "gold": [], "split": "test", "answerable": False},
        {"id": "3", "text": "c [CITATION]", "gold": ["y"], "split": "test", "answerable": True},
    ]))
    assert [i.id for i in load_items(f, split="test")] == ["2", "3"]
    assert [i.id for i in load_items(f, limit=1)] == ["1"]
    assert load_items(f)[1] == EvalItem("2", "b [CITATION]", (), (), False, "test")


@pytest.mark.slow
def test_evaluate_small_library_per_stage(small_library) -> None:
    from citefinder.evaluate import evaluate
    from citefinder.pipeline.pipeline import Pipeline

    items = [EvalItem(i["id"], i["text"], tuple(i["gold"]), tuple(i["gold_titles"]), True, i["split"])
             for i in small_library.citeme[:12]]
    # two unanswerable excerpts: their gold is not in the library
    items += [EvalItem("u1", "We fine-tune a protein folding model on cryo-EM maps [CITATION].", (), ("X",), False),
              EvalItem("u2", "Our robot uses a quantum annealer for path planning [CITATION].", (), ("Y",), False)]
    pipeline = Pipeline(small_library.settings, small_library.library)
    result = evaluate(pipeline, items, dataset="citeme-sample")
    stages = result["stages"]
    # every agent that searched on some item is a stage of its own, then fused and reranked
    assert {"bm25", "dense", "title", "fused", "reranked"} <= set(stages)
    assert set(stages) <= set(agent_names(small_library.settings)) | {"fused", "reranked"}
    assert list(stages)[-2:] == ["fused", "reranked"]
    for stage in stages.values():
        assert stage["queries"] == 12
        assert 0.0 <= stage["recall@1"] <= stage["recall@5"] <= stage["recall@100"] <= 1.0
    # measured 10 of 12 in the fused top 5 on this 300-paper library; one gold is beyond both retrievers
    assert stages["fused"]["recall@5"] >= 0.75
    assert stages["fused"]["recall@1"] >= 0.5
    # rerank is skipped (no cross-encoder): it passes the fused order through
    assert stages["reranked"]["mrr"] == pytest.approx(stages["fused"]["mrr"])
    sel = result["selection"]
    assert sel["answerable"] == 12 and sel["unanswerable"] == 2
    assert sel["hallucination_rate"] == 0.0
    assert result["library"]["papers"] == 300
    assert "llm_api_key" not in result["settings"]
    assert len(result["outcomes"]) == 14 and result["outcomes"][0]["result"]["traces"]
    json.dumps(result)  # plain data


def test_eval_cli_ablation_switches_reach_the_settings(small_library, tmp_path) -> None:
    from citefinder.cli.main import main

    data = tmp_path / "items.jsonl"
    data.write_text("\n".join(json.dumps(i) for i in small_library.citeme[:4]), encoding="utf-8")
    out = tmp_path / "results.json"
    code = main(["eval", "--dataset", str(data), "--library", str(small_library.settings.library),
                 "--fusion", "max", "--k", "20", "--context-sentences", "2", "--reranker", "none",
                 "--threshold", "0.1", "--out", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    s = result["settings"]
    assert (s["fusion"], s["k_bm25"], s["k_dense"], s["context_sentences"], s["reranker"],
            s["confidence_threshold"]) == ("max", 20, 20, 2, "none", 0.1)
    assert result["items"] == 4 and result["stages"]["fused"]["queries"] == 4
    # every retriever list is cut at the ablated depth
    assert all(len(t["top"]) <= 20 for o in result["outcomes"] for t in o["result"]["traces"] if t["agent"] == "bm25")
