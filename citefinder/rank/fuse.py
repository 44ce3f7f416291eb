"""Fusion of several rankings (one per agent, plus query variants) into one candidate list.

Pure functions: they read the rankings and papers they are given and return new records. The
weights and k of the "learned" method are data (:class:`Fusion`, loaded from
``citefinder/data/fusion.json``), chosen by ``bench/tune.py`` on the training split only.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

from citefinder.types import Candidate, Hit, Paper, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings

log = logging.getLogger(__name__)

FusionMethod = Literal["learned", "rrf", "max", "linear"]


def agent_of(list_name: str) -> str:
    """The agent behind a ranked list: "bm25#2" (a query variant) -> "bm25"."""
    return list_name.split("#", 1)[0]


@dataclass(frozen=True)
class Fusion:
    """How lists are fused: the method, RRF's k and a weight per agent (missing agents weigh ``default_weight``).

    ``provenance`` says where tuned values come from (split, score achieved), for traces and docs.
    """

    method: FusionMethod = "rrf"
    k: int = 60
    weights: Mapping[str, float] = field(default_factory=dict)
    default_weight: float = 1.0
    provenance: str = ""

    def weight(self, list_name: str) -> float:
        return float(self.weights.get(agent_of(list_name), self.default_weight))

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "k": self.k, "weights": dict(self.weights),
                "default_weight": self.default_weight, "provenance": self.provenance}


def learned_fusion(kind: Literal["slots", "questions"] = "slots") -> Fusion:
    """The tuned fusion shipped with CiteFinder (``citefinder/data/fusion.json``) for citation slots or
    for free-text questions (search): weighted RRF, or a linear model over each agent's rank and score."""
    data = json.loads(resources.files("citefinder.data").joinpath("fusion.json").read_text(encoding="utf-8"))[kind]
    return Fusion(data.get("method", "rrf"), int(data.get("k", 60)), dict(data["weights"]),
                  float(data.get("default_weight", 0.0)), str(data.get("provenance", "")))


def fusion_of(settings: "Settings", kind: Literal["slots", "questions"] = "slots", *,
              tuned: Mapping[str, float] | None = None) -> Fusion:
    """The :class:`Fusion` the settings ask for: the tuned weights for citation slots or for free-text
    questions ('learned'), plain RRF or max-score.

    An enabled agent that ``fusion.json`` has no tuned weight for gets the weight its registration
    declares (:attr:`~citefinder.retrieve.registry.AgentSpec.weight`), and a warning names it: run
    ``bench/tune.py fusion`` on training data to tune it. ``tuned``: weights tuned elsewhere (the literature's,
    ``citefinder/data/literature.json``) over the shipped ones: no warning for the agents they weigh."""
    if settings.fusion != "learned":
        return Fusion(settings.fusion, settings.rrf_k)
    from citefinder.retrieve.registry import agent_names, untuned_weight

    fusion = learned_fusion(kind)
    if tuned:
        fusion = replace(fusion, weights={**fusion.weights, **tuned})
    if fusion.method == "linear":
        return fusion
    untuned = {a: untuned_weight(a) for a in agent_names(settings) if a not in fusion.weights}
    if not untuned:
        return fusion
    log.warning("no tuned fusion weight for agent(s) %s (citefinder/data/fusion.json, %s): using %s until "
                "`bench/tune.py fusion` is run on training data", ", ".join(untuned), kind,
                ", ".join(f"{a}={w:g}" for a, w in untuned.items()))
    return replace(fusion, weights={**fusion.weights, **untuned},
                   provenance=f"{fusion.provenance}; untuned: {', '.join(untuned)}")


def list_features(rankings: Mapping[str, Sequence[Hit]]) -> dict[str, dict[str, float]]:
    """Per document, per agent (variants fold into their agent at their best rank): ``rr:<agent>`` = 1/rank,
    ``sc:<agent>`` = score / the list's best score, ``in:<agent>`` = 1 (absent documents have no entry)."""
    feats: dict[str, dict[str, float]] = {}
    for name, hits in rankings.items():
        if not hits:
            continue
        agent = agent_of(name)
        top = max((h.score for h in hits), default=0.0)
        for hit in hits:
            _check_rank(name, hit)
            f = feats.setdefault(hit.doc_id, {})
            rr = 1.0 / hit.rank
            if rr > f.get(f"rr:{agent}", 0.0):
                f[f"rr:{agent}"] = rr
                f[f"sc:{agent}"] = hit.score / top if top > 0 else 0.0
                f[f"in:{agent}"] = 1.0
    return feats


def linear(rankings: Mapping[str, Sequence[Hit]], fusion: Fusion) -> list[tuple[str, float]]:
    """A logistic model over :func:`list_features`: ``score(d) = sigmoid(b + Σ_f w_f x_f(d))``, the
    probability-like score a pointwise learning-to-rank model gives (weights fit by ``bench/tune.py``)."""
    bias = float(fusion.weights.get("bias", 0.0))
    scores: dict[str, float] = {}
    for doc_id, f in list_features(rankings).items():
        z = bias + sum(float(fusion.weights.get(name, 0.0)) * x for name, x in f.items())
        scores[doc_id] = 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0
    return _order(scores, _best_ranks(rankings))


def _check_rank(list_name: str, hit: Hit) -> None:
    if hit.rank < 1:
        raise ValueError(f"ranks are 1-based: {list_name!r} gives {hit.doc_id!r} rank {hit.rank}")


def _best_ranks(rankings: Mapping[str, Sequence[Hit]]) -> dict[str, int]:
    best: dict[str, int] = {}
    for name, hits in rankings.items():
        for hit in hits:
            _check_rank(name, hit)
            best[hit.doc_id] = min(best.get(hit.doc_id, hit.rank), hit.rank)
    return best


def _order(scores: Mapping[str, float], best_rank: Mapping[str, int]) -> list[tuple[str, float]]:
    # Deterministic ties: score desc, then best single rank asc, then doc_id asc.
    return sorted(scores.items(), key=lambda item: (-item[1], best_rank[item[0]], item[0]))


def rrf(rankings: Mapping[str, Sequence[Hit]], k: int = 60, weights: Fusion | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: ``score(d) = Σ_lists w_list / (k + rank_list(d))`` with 1-based ranks.

    Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
    Rank Learning Methods", SIGIR 2009 (k = 60, every w = 1 there); per-list weights as in
    weighted RRF (e.g. ranx's ``wmnz``/``rrf`` with weights). A document missing from a list adds
    nothing for that list; a document listed twice in one list counts once, at its best rank.
    Returns ``(doc_id, score)`` best first; ties broken by best single rank, then doc_id.
    """
    if k < 0:
        raise ValueError(f"the RRF constant k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    for name, hits in rankings.items():
        w = weights.weight(name) if weights is not None else 1.0
        seen: dict[str, int] = {}
        for hit in hits:
            _check_rank(name, hit)
            seen[hit.doc_id] = min(seen.get(hit.doc_id, hit.rank), hit.rank)
        if w == 0.0:
            continue
        for doc_id, rank in seen.items():
            scores[doc_id] = scores.get(doc_id, 0.0) + w / (k + rank)
    return _order(scores, _best_ranks(rankings))


def max_score(rankings: Mapping[str, Sequence[Hit]]) -> list[tuple[str, float]]:
    """Max-score fusion: min-max normalise each list's scores to [0, 1], keep each document's max.

    A list whose scores are all equal (or that holds one hit) normalises to 1.0. Same order
    and tie rule as :func:`rrf`.
    """
    scores: dict[str, float] = {}
    for hits in rankings.values():
        if not hits:
            continue
        lo = min(h.score for h in hits)
        hi = max(h.score for h in hits)
        span = hi - lo
        for hit in hits:
            norm = (hit.score - lo) / span if span > 0 else 1.0
            scores[hit.doc_id] = max(scores.get(hit.doc_id, 0.0), norm)
    return _order(scores, _best_ranks(rankings))


def fuse(
    rankings: Mapping[str, Sequence[Hit]], method: FusionMethod | Fusion = "rrf", k: int = 60
) -> list[tuple[str, float]]:
    """Fuse ``rankings`` by a :class:`Fusion` (weighted RRF), or by the name of a plain method."""
    if isinstance(method, Fusion):
        if method.method == "max":
            return max_score(rankings)
        if method.method == "linear":
            return linear(rankings, method)
        return rrf(rankings, method.k, method)
    if method == "rrf":
        return rrf(rankings, k)
    if method == "max":
        return max_score(rankings)
    if method == "learned":
        return fuse(rankings, learned_fusion())
    raise ValueError(f"unknown fusion method {method!r}: use 'learned', 'rrf' or 'max' (setting CITEFINDER_FUSION)")


def fuse_candidates(
    papers_by_id: Mapping[str, Paper],
    rankings: Mapping[str, Sequence[Hit]],
    method: FusionMethod | Fusion = "rrf",
    k: int = 60,
    *,
    limit: int | None = None,
) -> tuple[tuple[Candidate, ...], StageTrace]:
    """Fuse ``rankings`` into Candidates that keep one StageScore per list plus "fused".

    Only documents found in ``papers_by_id`` become candidates (others are listed in the
    trace as missing); ``limit`` caps the fused list before papers are looked up.
    """
    start = time.perf_counter()
    fused = fuse(rankings, method, k)
    head = fused if limit is None else fused[:limit]
    per_list: dict[str, dict[str, Hit]] = {}
    for name, hits in rankings.items():
        best: dict[str, Hit] = {}
        for hit in hits:
            if hit.doc_id not in best or hit.rank < best[hit.doc_id].rank:
                best[hit.doc_id] = hit
        per_list[name] = best

    candidates: list[Candidate] = []
    missing: list[str] = []
    for doc_id, score in head:
        paper = papers_by_id.get(doc_id)
        if paper is None:
            missing.append(doc_id)
            continue
        cand = Candidate(paper)
        for name, best in per_list.items():
            if doc_id in best:
                cand = cand.with_score(name, best[doc_id].rank, best[doc_id].score)
        candidates.append(cand.with_score("fused", len(candidates) + 1, score))

    if isinstance(method, Fusion):
        label = {"linear": "learned linear", "rrf": "weighted RRF" if method.weights else "rrf"}.get(
            method.method, method.method)
        params: dict[str, Any] = {**method.to_dict(), "n_lists": len(rankings), "limit": limit}
    else:
        label, params = method, {"method": method, "k": k, "n_lists": len(rankings), "limit": limit}
    trace = StageTrace(
        agent="fuse",
        status="ok",
        message=f"{label} fusion of {len(rankings)} lists: {len(fused)} documents, kept {len(candidates)}",
        inputs={"lists": {name: len(hits) for name, hits in rankings.items()}},
        params=params,
        top=tuple(Hit(c.doc_id, i + 1, c.stage("fused").score) for i, c in enumerate(candidates)),  # type: ignore[union-attr]
        elapsed_s=time.perf_counter() - start,
        details={"fused_total": len(fused), "missing": missing},
    )
    return tuple(candidates), trace
