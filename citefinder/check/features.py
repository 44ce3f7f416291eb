"""What the engine says about one cited paper in one context: where the fused ranking puts it, the
engine's calibrated confidence there, and how close its vector and its words are to the context
compared with every other paper of the library (so a paper no agent listed still has a score).

The features are computed once per cite command (one retrieval) for every key it cites and every
alternative worth showing; :mod:`citefinder.check.model` turns them into the probability that the
key fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from citefinder.rank.calibration import candidate_features
from citefinder.retrieve.agents.dense import dense_text
from citefinder.types import Candidate, Query, Slot

if TYPE_CHECKING:
    from citefinder.pipeline.pipeline import Pipeline

ALTERNATIVES_FROM = 5  # alternatives are looked for among the top candidates


@dataclass(frozen=True)
class Ranked:
    """One context (a cite command's slot) ranked against the whole library."""

    slot: Slot
    query: Query
    candidates: tuple[Candidate, ...]
    ran: tuple[str, ...]
    size: int
    cosine: dict[str, float] = field(default_factory=dict)  # doc_id -> cosine with the context, every paper
    best_cosine: float = 0.0
    bm25: dict[str, tuple[int, float]] = field(default_factory=dict)  # doc_id -> (rank, score), papers it matched


def rank_context(pipeline: "Pipeline", slot: Slot, *, draft: str = "") -> Ranked:
    """Retrieve, fuse and rerank for ``slot``; then the context's cosine with every paper's vector and its
    BM25 score for every paper with a word in common."""
    import numpy as np

    from citefinder.index.base import derived
    from citefinder.index.vectors import VECTORS

    query, candidates, traces = pipeline.rank_slot(slot, draft=draft)
    library = pipeline.library
    size = library.count()
    cosine: dict[str, float] = {}
    best = 0.0
    if library.embedded_count() and library.embedded_count() <= pipeline.settings.exact_dense_max:
        matrix = derived(library, VECTORS)
        if len(matrix.doc_ids):
            vector = library.embedder.encode([dense_text(query)])[0]
            sims = np.asarray(matrix.matrix) @ np.asarray(vector, dtype=np.float32)
            cosine = dict(zip(matrix.doc_ids, (float(x) for x in sims), strict=True))
            best = float(sims.max())
    bm25 = {h.doc_id: (h.rank, h.score) for h in library.bm25_search(query.focus, max(1, size))}
    return Ranked(slot, query, candidates, tuple(pipeline.agents_ran(traces)), size, cosine, best, bm25)


def fit_features(ranked: Ranked, doc_id: str, *, exclude: frozenset[str] = frozenset(),
                 calibration: Any = None) -> dict[str, float]:
    """Features of ``doc_id`` as the paper cited in ``ranked``'s context; papers in ``exclude`` (the other
    keys of the same command) are taken out of the ranking first: they are not competitors."""
    from citefinder.rank.calibration import default_calibration

    calibration = calibration or default_calibration()
    cands = [c for c in ranked.candidates if c.doc_id not in exclude or c.doc_id == doc_id]
    size = max(1, ranked.size - len(exclude))
    f: dict[str, float] = {}
    at = next((i for i, c in enumerate(cands) if c.doc_id == doc_id), None)
    f["in_list"] = 1.0 if at is not None else 0.0
    f["rr_fused"] = 1.0 / (at + 1) if at is not None else 0.0
    f["p_engine"] = calibration.probability(candidate_features(cands, at, ranked.ran, size)) if at is not None else 0.0
    others = [calibration.probability(candidate_features(cands, i, ranked.ran, size))
              for i in range(min(ALTERNATIVES_FROM, len(cands))) if i != at]
    f["alt_p"] = max(others, default=0.0)
    cos = ranked.cosine.get(doc_id)
    f["dense_cos"] = cos if cos is not None else 0.0
    f["dense_gap"] = ranked.best_cosine - cos if cos is not None else 1.0
    if cos is not None:
        above = sum(1 for d, x in ranked.cosine.items() if x > cos and d not in exclude)
        f["dense_pct"] = above / size
    else:
        f["dense_pct"] = 1.0
    rank, score = ranked.bm25.get(doc_id, (0, 0.0))
    above = sum(1 for d, (r, _) in ranked.bm25.items() if rank and r < rank and d not in exclude)
    f["bm25_pct"] = above / size if rank else 1.0
    f["bm25_raw"] = math.log1p(max(0.0, score))
    f["log_library"] = math.log10(size)
    return f
