"""Does the reranker beat the fused order? Measured on held-out queries, per rerank depth N.

Two orders per N: "reranked@N" sorts by the model's score alone, "blended@N" fuses the fused rank
and the rerank rank by RRF (the pipeline's default, setting ``rerank_blend``).
For each query the fused ranking (as the pipeline builds it) is reranked down to N; below N the
fused order continues, exactly as the pipeline's "reranked" stage is scored by
:mod:`citefinder.evaluate.runner`. The cross-encoder scores each pair independently, so the
top ``max(N)`` is scored once and every smaller N is derived from the same scores. Metrics come
from :mod:`citefinder.evaluate.metrics` (BEIR-style): recall@5/10, MRR, and top-1 (the first
paper is gold).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from citefinder.evaluate.metrics import evaluate_run
from citefinder.rank.rerank import blend_order
from citefinder.train.rerank.mining import MinedQuery
from citefinder.types import Candidate, Query

if TYPE_CHECKING:
    from citefinder.library.store import Library
    from citefinder.rank.rerank import Reranker

METRICS = ("recall@5", "recall@10", "mrr", "top1")


def _as_run(order: Sequence[str]) -> dict[str, float]:
    return {d: 1.0 / r for r, d in enumerate(order, start=1)}


def summarize(qrels: dict[str, dict[str, int]], orders: dict[str, list[str]]) -> dict[str, float]:
    """recall@5/10, MRR and top-1 of ranked doc-id lists."""
    m = evaluate_run(qrels, {q: _as_run(o) for q, o in orders.items()}, ks=(5, 10))
    top1 = [1.0 if orders.get(q) and qrels[q].get(orders[q][0], 0) > 0 else 0.0 for q in qrels]
    return {
        "queries": int(m["queries"]),
        **{k: round(m.get(k, 0.0), 4) for k in ("recall@5", "recall@10", "mrr")},
        "top1": round(sum(top1) / len(top1), 4) if top1 else 0.0,
    }


def candidates_for(library: "Library", mined: MinedQuery, n: int) -> list[Candidate]:
    papers = {p.doc_id: p for p in library.get(list(mined.fused[:n]))}
    ids = [d for d in mined.fused[:n] if d in papers]
    return [Candidate(papers[d]).with_score("fused", r, 1.0 / r) for r, d in enumerate(ids, start=1)]


def rerank_scores(
    reranker: "Reranker",
    library: "Library",
    mined: Sequence[MinedQuery],
    depth: int,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, dict[str, float]]:
    """``{query id: {doc_id: rerank score}}`` for the fused top ``depth`` of each query."""
    scores: dict[str, dict[str, float]] = {}
    for done, q in enumerate(mined, start=1):
        _, trace = reranker.rerank(Query(q.query), candidates_for(library, q, depth), depth)
        if trace.status not in ("ok",):
            raise RuntimeError(f"the reranker did not score query {q.id}: {trace.message}")
        scores[q.id] = {h.doc_id: h.score for h in trace.top}
        if progress:
            progress(done, len(mined))
    return scores


def _reordered(fused: Sequence[str], scores: dict[str, float], n: int, blend: str, k: int = 60) -> list[str]:
    """The top ``n`` of ``fused`` in the order the pipeline's reranker gives them, then the fused tail."""
    head = [d for d in fused[:n] if d in scores]
    ordered = [head[i] for i in blend_order([scores[d] for d in head], blend, k)]
    return ordered + [d for d in fused if d not in set(ordered)]


def reranked_order(fused: Sequence[str], scores: dict[str, float], n: int) -> list[str]:
    """The top ``n`` of ``fused`` by rerank score (stable: ties keep the fused order), then the fused tail."""
    return _reordered(fused, scores, n, "replace")


def blended_order(fused: Sequence[str], scores: dict[str, float], n: int, k: int = 60) -> list[str]:
    """The top ``n`` of ``fused`` by reciprocal rank fusion of its fused rank and its rerank rank, then the tail.

    The cross-encoder becomes a third voter beside BM25 and dense instead of overruling them;
    ``k`` is the pipeline's RRF constant (1-based ranks), not tuned per model.
    """
    return _reordered(fused, scores, n, "rrf", k)


def compare(
    mined: Sequence[MinedQuery], scores: dict[str, dict[str, float]], top_ns: Sequence[int]
) -> dict[str, dict[str, float]]:
    """Metrics of the fused order and of the reranked order for each N in ``top_ns``."""
    qrels = {q.id: {p.doc_id: 1 for p in q.positives} for q in mined}
    out = {"fused": summarize(qrels, {q.id: list(q.fused) for q in mined})}
    for n in top_ns:
        out[f"reranked@{n}"] = summarize(qrels, {q.id: reranked_order(q.fused, scores[q.id], n) for q in mined})
        out[f"blended@{n}"] = summarize(qrels, {q.id: blended_order(q.fused, scores[q.id], n) for q in mined})
    return out


def stage_name(top_n: int, blend: str = "rrf") -> str:
    """The report row the pipeline's rerank stage corresponds to ("blended@N" or "reranked@N")."""
    return f"{'blended' if blend == 'rrf' else 'reranked'}@{top_n}"


def reranker_wins(report: dict[str, dict[str, float]], top_n: int, blend: str = "rrf") -> bool:
    """The pipeline's rerank order at ``top_n`` beats the fused order: higher MRR, recall@10 at most a point lower."""
    fused, reranked = report["fused"], report.get(stage_name(top_n, blend))
    if not reranked:
        return False
    return reranked["mrr"] > fused["mrr"] and reranked["recall@10"] >= fused["recall@10"] - 0.01


def rerank_latency(
    reranker: "Reranker", library: "Library", mined: Sequence[MinedQuery], top_ns: Sequence[int], *,
    sample: int = 20, seed: int = 13,
) -> dict[str, dict[str, float]]:
    """Seconds per slot to rerank N candidates (the paper lookup excluded), over a seeded sample of queries."""
    chosen = random.Random(seed).sample(list(mined), min(sample, len(mined)))
    out: dict[str, dict[str, float]] = {}
    if chosen:  # load the model outside the timings
        reranker.rerank(Query("warm-up"), candidates_for(library, chosen[0], 2), 2)
    for n in top_ns:
        times = []
        for q in chosen:
            cands = candidates_for(library, q, n)
            t0 = time.perf_counter()
            reranker.rerank(Query(q.query), cands, n)
            times.append(time.perf_counter() - t0)
        if times:
            out[str(n)] = {"p50_s": round(statistics.median(times), 3), "mean_s": round(statistics.fmean(times), 3),
                           "max_s": round(max(times), 3), "queries": len(times)}
    return out


def validation_report(
    reranker: "Reranker", library: "Library", mined: Sequence[MinedQuery], top_ns: Sequence[int] = (20, 50, 100),
    *, progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Fused vs reranked metrics on ``mined`` (mined with ``keep_fused`` >= the largest N)."""
    scores = rerank_scores(reranker, library, mined, max(top_ns), progress=progress)
    return compare(mined, scores, top_ns)
