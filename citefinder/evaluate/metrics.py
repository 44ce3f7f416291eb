"""Retrieval metrics over BEIR-style plain dicts.

``qrels: {qid: {doc_id: relevance}}`` and ``run: {qid: {doc_id: score}}`` (higher score = better).
Ranks are taken from the scores, ties broken by doc_id so results are deterministic.
"""

from __future__ import annotations

import math
from typing import Mapping

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def ranking(scores: Mapping[str, float]) -> list[str]:
    """Doc ids best first; ties by doc_id."""
    return sorted(scores, key=lambda d: (-scores[d], d))


def recall_at_k(rel: Mapping[str, int], ranked: list[str], k: int) -> float:
    """Share of relevant documents found in the top k (0.0 when nothing is relevant)."""
    relevant = {d for d, r in rel.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def reciprocal_rank(rel: Mapping[str, int], ranked: list[str], k: int | None = None) -> float:
    """1/rank of the first relevant document (Voorhees, TREC-8 QA track 1999); 0 if none."""
    for i, d in enumerate(ranked[:k] if k else ranked, start=1):
        if rel.get(d, 0) > 0:
            return 1.0 / i
    return 0.0


def ndcg_at_k(rel: Mapping[str, int], ranked: list[str], k: int = 10) -> float:
    """nDCG@k with linear gains (Järvelin & Kekäläinen, TOIS 2002)."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 1) for i, d in enumerate(ranked[:k], start=1))
    ideal = sorted((r for r in rel.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 1) for i, r in enumerate(ideal, start=1))
    return dcg / idcg if idcg else 0.0


def success_at_k(rel: Mapping[str, int], ranked: list[str], k: int) -> float:
    """1.0 when any relevant document is in the top k (a multi-key citation slot is hit by any of its papers)."""
    return 1.0 if any(rel.get(d, 0) > 0 for d in ranked[:k]) else 0.0


def evaluate_run(qrels: Qrels, run: Run, ks: tuple[int, ...] = (1, 5, 10, 20, 100)) -> dict[str, float]:
    """Mean metrics over the queries of ``qrels`` that have at least one relevant document.

    A query missing from ``run`` counts as retrieving nothing. ``hit@k`` is success at k (any
    relevant document in the top k), the measure for citation slots with several keys.
    """
    qids = [q for q, rel in qrels.items() if any(r > 0 for r in rel.values())]
    out: dict[str, float] = {"queries": float(len(qids))}
    if not qids:
        return out
    ranked = {q: ranking(run.get(q, {})) for q in qids}
    for k in ks:
        out[f"recall@{k}"] = sum(recall_at_k(qrels[q], ranked[q], k) for q in qids) / len(qids)
    for k in ks:
        out[f"hit@{k}"] = sum(success_at_k(qrels[q], ranked[q], k) for q in qids) / len(qids)
    out["mrr"] = sum(reciprocal_rank(qrels[q], ranked[q]) for q in qids) / len(qids)
    out["ndcg@10"] = sum(ndcg_at_k(qrels[q], ranked[q], 10) for q in qids) / len(qids)
    return out
