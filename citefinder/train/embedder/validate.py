"""Does the trained embedder find the cited paper more often than the base one? Exact dense search of held-out
citing sentences over a corpus of the papers they cite plus distractors, both models on the same corpus.

The held-out sentences come from citing papers never trained on
(:func:`~citefinder.train.embedder.pack.split_by_citing`); the distractors are other cited papers of the
same pack (the same fields and the same text shapes: titles, titles with abstracts), so the measure is not
won by telling text shapes apart. Metrics are :func:`~citefinder.evaluate.metrics.evaluate_run`'s
(hit@k: any paper of the cite command in the top k).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from citefinder.evaluate.metrics import evaluate_run
from citefinder.train.embedder.pack import ContextPair

Encode = Callable[[Sequence[str]], np.ndarray]  # texts -> L2-normalised vectors
KS = (1, 10, 100)
METRICS = ("hit@1", "hit@10", "hit@100", "mrr")


@dataclass(frozen=True)
class HeldOutSet:
    """Queries with their gold papers, and the corpus searched."""

    queries: tuple[tuple[str, str, frozenset[str]], ...]  # (id, query text, gold docs)
    corpus_ids: tuple[str, ...]
    corpus_texts: tuple[str, ...]

    def to_dict(self) -> dict[str, int]:
        return {"queries": len(self.queries), "corpus": len(self.corpus_ids)}


def held_out_set(
    held: Sequence[ContextPair], others: Sequence[ContextPair], *, max_queries: int | None = 2000,
    distractors: int = 5000, seed: int = 13,
) -> HeldOutSet:
    """Up to ``max_queries`` held-out sentences (seeded sample) against every paper they cite plus
    ``distractors`` papers cited elsewhere in the pack (``others``)."""
    rng = random.Random(seed)
    chosen = list(held) if max_queries is None or len(held) <= max_queries else rng.sample(list(held), max_queries)
    docs: dict[str, str] = {}
    for p in held:  # every held-out paper, so a sentence's other gold papers are findable too
        docs.setdefault(p.doc, p.doc_text)
    pool = sorted({p.doc: p.doc_text for p in others if p.doc not in docs}.items())
    for doc, text in rng.sample(pool, min(distractors, len(pool))):
        docs[doc] = text
    queries = tuple((p.id, p.query, p.gold) for p in chosen)
    return HeldOutSet(queries, tuple(docs), tuple(docs.values()))


def dense_metrics(encode: Encode, data: HeldOutSet, *, k: int = 100, encode_queries: Encode | None = None,
                  docs: np.ndarray | None = None) -> dict[str, Any]:
    """hit@1/10/100 and MRR of exact cosine search, and how long embedding took.

    ``encode_queries``: a query side of its own (a query encoder trained against ``encode``'s document
    vectors); ``docs``: the corpus's vectors already made by ``encode`` (not timed again).
    """
    start = time.perf_counter()
    timed = docs is None
    docs = encode(list(data.corpus_texts)) if docs is None else docs
    corpus_s = time.perf_counter() - start
    queries = (encode_queries or encode)([q for _, q, _ in data.queries])
    run: dict[str, dict[str, float]] = {}
    for lo in range(0, len(data.queries), 512):  # 512 x corpus similarities at a time
        sims = queries[lo:lo + 512] @ docs.T
        top = np.argsort(-sims, axis=1)[:, :k]
        for row, (qid, _, _) in enumerate(data.queries[lo:lo + 512]):
            run[qid] = {data.corpus_ids[j]: float(sims[row, j]) for j in top[row]}
    qrels = {qid: {d: 1 for d in gold} for qid, _, gold in data.queries}
    m = evaluate_run(qrels, run, ks=KS)
    out: dict[str, Any] = {"queries": int(m.get("queries", 0))}
    out.update({name: round(m.get(name, 0.0), 4) for name in METRICS})
    if timed:
        out["corpus_docs_per_s"] = round(len(data.corpus_texts) / max(corpus_s, 1e-9), 1)
    return out


def embedder_wins(base: dict[str, Any], trained: dict[str, Any]) -> bool:
    """The trained model beats the base: higher MRR, and hit@10 at most a point lower."""
    return trained["mrr"] > base["mrr"] and trained["hit@10"] >= base["hit@10"] - 0.01
