"""Fusion on hand-computed lists: exact order and scores, ties, k, max-score, inputs untouched."""

from __future__ import annotations

import copy

import pytest

from citefinder.rank.fuse import fuse, fuse_candidates, max_score, rrf
from citefinder.types import Hit, Paper


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(doc_id, rank, score) for rank, (doc_id, score) in enumerate(pairs, start=1)]


A = hits(("a", 10.0), ("b", 5.0), ("c", 0.0))
B = hits(("c", 0.9), ("d", 0.5), ("a", 0.1))


def test_rrf_exact_order_and_scores():
    got = rrf({"bm25": A, "dense": B}, k=60)
    assert [d for d, _ in got] == ["a", "c", "b", "d"]
    expected = {"a": 1 / 61 + 1 / 63, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "d": 1 / 62}
    for doc_id, score in got:
        assert score == pytest.approx(expected[doc_id], abs=1e-15)


def test_rrf_two_lists_hand_computed():
    got = rrf({"x": hits(("a", 0), ("b", 0), ("c", 0)), "y": hits(("c", 0), ("a", 0), ("d", 0))})
    assert got == [
        ("a", pytest.approx(1 / 61 + 1 / 62)),
        ("c", pytest.approx(1 / 63 + 1 / 61)),
        ("b", pytest.approx(1 / 62)),
        ("d", pytest.approx(1 / 63)),
    ]


def test_rrf_ties_by_best_rank_then_doc_id():
    # k=0: v = 1/1, w = 1/1, u = 1/2 + 1/2 = 1 -> all tie; u's best rank is 2, so it comes last
    got = rrf({"A": hits(("v", 0), ("u", 0)), "B": hits(("w", 0), ("u", 0))}, k=0)
    assert got == [("v", 1.0), ("w", 1.0), ("u", 1.0)]
    # same score and same best rank: doc_id ascending, whatever the input order
    assert [d for d, _ in rrf({"A": hits(("z", 0)), "B": hits(("y", 0))})] == ["y", "z"]


def test_rrf_k_changes_the_order():
    lists = {"A": hits(("a", 0), ("x", 0), ("b", 0)), "B": hits(("y", 0), ("z", 0), ("b", 0))}
    assert [d for d, _ in rrf(lists, k=0)][:2] == ["a", "y"]  # a = 1, b = 2/3
    assert [d for d, _ in rrf(lists, k=60)][0] == "b"  # b = 2/63 > a = 1/61


def test_rrf_duplicate_in_one_list_counts_once_at_best_rank():
    got = dict(rrf({"A": [Hit("a", 1, 0), Hit("a", 3, 0)]}, k=60))
    assert got["a"] == pytest.approx(1 / 61)


def test_rrf_rejects_zero_based_ranks():
    with pytest.raises(ValueError, match="1-based"):
        rrf({"A": [Hit("a", 0, 1.0)]})


def test_max_score_min_max_normalised_then_max():
    got = max_score({"bm25": A, "dense": B})
    # bm25 -> a 1, b .5, c 0; dense -> c 1, d .5, a 0; a and c tie at 1 (both best rank 1)
    # dense d = (0.5 - 0.1) / (0.9 - 0.1) = 0.5: ties with b (both best rank 2), doc_id decides
    assert got == [("a", 1.0), ("c", 1.0), ("b", 0.5), ("d", pytest.approx(0.5))]


def test_max_score_single_hit_list_is_one():
    assert max_score({"A": hits(("a", 3.2))}) == [("a", 1.0)]


def test_fuse_dispatch_and_unknown_method():
    assert fuse({"A": A}, "rrf") == rrf({"A": A})
    assert fuse({"A": A}, "max") == max_score({"A": A})
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse({"A": A}, "borda")  # type: ignore[arg-type]


def test_fuse_candidates_keeps_per_stage_scores_and_does_not_mutate():
    rankings = {"bm25": A, "dense": B}
    papers = {d: Paper(doc_id=d, title=f"Paper {d}") for d in "abc"}  # "d" is not in the library
    before_rankings, before_papers = copy.deepcopy(rankings), dict(papers)

    cands, trace = fuse_candidates(papers, rankings, "rrf", 60)

    assert rankings == before_rankings and papers == before_papers
    assert [c.doc_id for c in cands] == ["a", "c", "b"]
    a = cands[0]
    assert (a.stage("bm25").rank, a.stage("bm25").score) == (1, 10.0)
    assert (a.stage("dense").rank, a.stage("dense").score) == (3, 0.1)
    assert a.stage("fused").rank == 1 and a.stage("fused").score == pytest.approx(1 / 61 + 1 / 63)
    assert cands[2].stage("dense") is None  # b was not retrieved by dense
    assert [c.stage("fused").rank for c in cands] == [1, 2, 3]
    assert trace.agent == "fuse" and trace.status == "ok"
    assert trace.details["missing"] == ["d"]
    assert trace.params == {"method": "rrf", "k": 60, "n_lists": 2, "limit": None}
    assert [h.doc_id for h in trace.top] == ["a", "c", "b"]


def test_fuse_candidates_limit():
    papers = {d: Paper(doc_id=d, title=d) for d in "abcd"}
    cands, trace = fuse_candidates(papers, {"bm25": A, "dense": B}, "max", 60, limit=2)
    assert [c.doc_id for c in cands] == ["a", "c"]
    assert trace.details["fused_total"] == 4


def test_weighted_rrf_weighs_each_agent_and_folds_variants_into_it():
    from citefinder.rank.fuse import Fusion

    lists = {"names": [Hit("a", 1, 3.0)], "bm25": [Hit("b", 1, 9.0), Hit("a", 2, 5.0)], "bm25#1": [Hit("b", 1, 2.0)]}
    plain = dict(rrf(lists, 1))
    assert plain["b"] > plain["a"]  # b is first in two lists
    weighted = fuse(lists, Fusion("rrf", 1, {"names": 5.0, "bm25": 1.0}))
    assert [d for d, _ in weighted] == ["a", "b"]  # a strong name match outweighs two lexical firsts
    assert dict(weighted)["a"] == pytest.approx(5.0 / 2 + 1.0 / 3)
    assert dict(fuse(lists, Fusion("rrf", 1, {"bm25": 1.0}, default_weight=0.0)))["a"] == pytest.approx(1.0 / 3)


def test_linear_fusion_scores_each_agents_rank_and_score():
    from citefinder.rank.fuse import Fusion, list_features

    lists = {"bm25": [Hit("a", 1, 8.0), Hit("b", 2, 4.0)], "dense": [Hit("b", 1, 0.9)]}
    feats = list_features(lists)
    assert feats["b"] == {"rr:bm25": 0.5, "sc:bm25": 0.5, "in:bm25": 1.0, "rr:dense": 1.0, "sc:dense": 1.0,
                          "in:dense": 1.0}
    model = Fusion("linear", 60, {"rr:dense": 4.0, "rr:bm25": 1.0, "bias": -2.0})
    ranked = fuse(lists, model)
    assert [d for d, _ in ranked] == ["b", "a"]
    assert all(0.0 < s < 1.0 for _, s in ranked)  # a probability-like score
