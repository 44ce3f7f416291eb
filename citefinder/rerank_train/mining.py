"""Hard negatives from our own retrieval: what BM25 + dense + fusion rank high that is not the gold.

For each example the query is built exactly as the pipeline builds it (the slot's context, or
the question, through the "reformulate" agent), so the reranker trains on the text it will see.
Negatives are taken from the fused top ``depth``: half of them the highest-ranked non-gold
papers, the rest sampled (seeded per example) from the remainder, as in the hard-negative
recipes for MS MARCO cross-encoders (Nogueira & Cho 2019, "Passage Re-ranking with BERT").
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citefinder.evaluate.dataset import EvalItem
from citefinder.fuse import fuse
from citefinder.library.dedupe import normalize_title
from citefinder.retrieve.bm25 import retrieve_bm25
from citefinder.retrieve.dense import retrieve_dense
from citefinder.retrieve.reformulate import reformulate
from citefinder.slots import find_slots
from citefinder.types import Paper, Query

if TYPE_CHECKING:
    from citefinder.library.store import Library

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class MinedQuery:
    """One example ready for training or validation."""

    id: str
    query: str  # the reformulated query text (what the reranker reads)
    positives: tuple[Paper, ...]  # gold papers found in the library
    negatives: tuple[Paper, ...]  # hard negatives (never gold)
    fused: tuple[str, ...]  # fused ranking (doc ids, best first) down to ``keep_fused``


@dataclass(frozen=True)
class MiningReport:
    examples: int
    mined: int
    no_gold_in_library: int  # examples skipped: none of their gold papers is in the library
    empty_query: int  # examples skipped: nothing left to search for after cleaning
    negatives: int
    elapsed_s: float

    def to_dict(self) -> dict[str, float]:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def example_query(item: EvalItem) -> Query:
    """The pipeline's query for an example: its first slot's context, else the whole text as a question."""
    slots = find_slots(item.text)
    query, _ = reformulate(slots[0] if slots else item.text)
    return query


def fused_ranking(library: "Library", query: Query) -> list[str]:
    """Doc ids in the pipeline's fused order (BM25 + dense with the depths and fusion of ``library.settings``)."""
    s = library.settings
    bm25, _ = retrieve_bm25(library, query, s.k_bm25)
    dense, _ = retrieve_dense(library, query, s.k_dense)
    return [doc_id for doc_id, _ in fuse({**bm25, **dense}, s.fusion, s.rrf_k)]


def pick_negatives(ranked: Sequence[str], n: int, rng: random.Random) -> list[str]:
    """``n`` of ``ranked`` (already without gold): the top ``ceil(n/2)``, then a sample of the rest."""
    n = min(n, len(ranked))
    top = (n + 1) // 2
    rest = list(ranked[top:])
    return list(ranked[:top]) + rng.sample(rest, n - top)


def mine_hard_negatives(
    library: "Library",
    items: Sequence[EvalItem],
    *,
    negatives: int = 4,
    depth: int = 30,
    keep_fused: int = 0,
    seed: int = 13,
    progress: Progress | None = None,
) -> tuple[list[MinedQuery], MiningReport]:
    """Mine ``negatives`` hard negatives per gold paper for every example.

    ``depth``: how deep in the fused list negatives are drawn from; ``keep_fused``: how much of
    the fused ranking each MinedQuery keeps (for validation of the reranker; 0 keeps none).
    Papers with the same normalised title as a gold paper are never negatives.
    """
    start = time.perf_counter()
    mined: list[MinedQuery] = []
    no_gold = empty = n_neg = 0
    for done, item in enumerate(items, start=1):
        positives = library.get(list(item.gold))
        query = example_query(item)
        if not positives:
            no_gold += 1
        elif not query.text.strip():
            empty += 1
        else:
            ranked = fused_ranking(library, query)
            gold_ids = {p.doc_id for p in positives} | set(item.gold)
            gold_titles = {normalize_title(p.title) for p in positives}
            pool = [d for d in ranked[:depth] if d not in gold_ids]
            pool_papers = {p.doc_id: p for p in library.get(pool)}
            pool = [d for d in pool if d in pool_papers and normalize_title(pool_papers[d].title) not in gold_titles]
            rng = random.Random(f"{seed}:{item.id}")
            chosen = pick_negatives(pool, negatives * len(positives), rng)
            n_neg += len(chosen)
            mined.append(
                MinedQuery(
                    item.id,
                    query.text,
                    tuple(positives),
                    tuple(pool_papers[d] for d in chosen),
                    tuple(ranked[:keep_fused]),
                )
            )
        if progress:
            progress(done, len(items))
    report = MiningReport(len(items), len(mined), no_gold, empty, n_neg, time.perf_counter() - start)
    return mined, report
