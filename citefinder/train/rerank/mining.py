"""Hard negatives from our own retrieval: what BM25 + dense + fusion rank high that is not the gold.

The reranker only ever sees the fused top-N, so it is trained on that distribution:

- the query is built exactly as the pipeline builds it (the slot's context, or the question,
  through the "reformulate" agent);
- a gold paper is a positive only when the retrievers found it (fused top ``positive_depth``):
  a gold paper the retrievers miss shares few words with the query, and training on it against
  retrieved negatives teaches the model that overlap with the query means "wrong";
- negatives are sampled uniformly (seeded per example) from the non-gold papers of the fused top
  ``depth``. Taking only the very top ones fails on this data: the gold lists are incomplete,
  so the top non-gold papers are often relevant papers labelled wrong (false negatives, cf.
  RocketQA, Qu et al. 2021). Measured: a model trained on top-ranked negatives reranked worse
  than the fused order (bench/RESULTS-reranker.md).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citefinder.evaluate.dataset import EvalItem
from citefinder.library.identity import normalize_title
from citefinder.rank.fuse import fuse, fusion_of
from citefinder.retrieve.base import Agent, retrieve
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.retrieve.registry import make_agents
from citefinder.text.slots import find_slots
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
    gold_not_retrieved: int  # examples skipped: no gold paper in the fused top ``positive_depth``
    empty_query: int  # examples skipped: nothing left to search for after cleaning
    negatives: int
    elapsed_s: float

    def to_dict(self) -> dict[str, float]:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def example_query(item: EvalItem, context_sentences: int = 0) -> Query:
    """The pipeline's query for an example: its first slot's context, else the whole text as a question."""
    slots = find_slots(item.text, context_sentences)
    query, _ = reformulate(slots[0] if slots else item.text)
    return query


def fused_ranking(library: "Library", query: Query, agents: list[Agent] | None = None) -> list[str]:
    """Doc ids in the pipeline's fused order (the agents, depths and fusion of ``library.settings``);
    pass ``agents`` to reuse them across queries."""
    agents = agents if agents is not None else make_agents(library.settings, library)
    rankings, _ = retrieve(agents, query)
    return [doc_id for doc_id, _ in fuse(rankings, fusion_of(library.settings))]


def pick_negatives(ranked: Sequence[str], n: int, rng: random.Random) -> list[str]:
    """``n`` of ``ranked`` (already without gold), sampled uniformly, in ranked order."""
    chosen = set(rng.sample(range(len(ranked)), min(n, len(ranked))))
    return [d for i, d in enumerate(ranked) if i in chosen]


def mine_hard_negatives(
    library: "Library",
    items: Sequence[EvalItem],
    *,
    negatives: int = 3,
    depth: int = 50,
    positive_depth: int | None = 100,
    keep_fused: int = 0,
    seed: int = 13,
    progress: Progress | None = None,
) -> tuple[list[MinedQuery], MiningReport]:
    """Mine ``negatives`` hard negatives per gold paper for every example.

    ``depth``: how deep in the fused list negatives are drawn from; ``positive_depth``: gold
    papers ranked below it are not positives (None keeps every gold paper, as validation must);
    ``keep_fused``: how much of the fused ranking each MinedQuery keeps (0 keeps none). Papers
    with the same normalised title as a gold paper are never negatives.
    """
    start = time.perf_counter()
    agents = make_agents(library.settings, library)  # once: the draft agent keeps its cache across queries
    mined: list[MinedQuery] = []
    no_gold = empty = missed = n_neg = 0
    for done, item in enumerate(items, start=1):
        positives = library.get(list(item.gold))
        query = example_query(item, library.settings.context_sentences)
        if not positives:
            no_gold += 1
        elif not query.text.strip():
            empty += 1
        else:
            ranked = fused_ranking(library, query, agents)
            gold_ids = {p.doc_id for p in positives} | set(item.gold)
            gold_titles = {normalize_title(p.title) for p in positives}
            if positive_depth is not None:
                found = set(ranked[:positive_depth])
                positives = [p for p in positives if p.doc_id in found]
            if not positives:
                missed += 1
                if progress:
                    progress(done, len(items))
                continue
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
    report = MiningReport(len(items), len(mined), no_gold, missed, empty, n_neg, time.perf_counter() - start)
    return mined, report
