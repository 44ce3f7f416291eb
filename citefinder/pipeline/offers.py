"""The literature's offers: each paper's probability of being the slot's cited paper, read from the evidence, and
what a panel shows of them.

The literature's engine ranks a slot's query (:mod:`citefinder.pipeline.literature`); what it found is offered here
by **evidence, not position**: each candidate's features (:func:`evidence`) are the agents' own scores and how far
each stands above the next (BM25's and the static agents' raw scores and gaps), how many agents agree on it, the
fused score against the best, whether the sentence names its work, and what the user's library says of it (authors
the user cites, the topic of the closest paper, years beside the draft's other citations, the papers cited near
the slot and the ones the memory cites with them). A logistic model (``citefinder/data/offers.json``, fit on
drafts-dev's training slots by ``bench/offers_fit.py``) turns them into a calibrated probability; the offers are
that probability's order, never another (:func:`offer_order`), the same paper for every sentence only when the
evidence says so.

A panel shows only what it says it shows (:func:`panel`): the offers at or above the ``floor`` open, the others in
a collapsed "less likely" part; with none above it, one collapsed "nothing likely" line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from citefinder.types import Candidate, StageTrace

# the agents whose lists are evidence (a list's variants fold into their agent: "bm25:title" -> bm25)
AGENTS = ("bm25", "static", "static-context", "static-draft", "dense", "context", "draft", "title", "names",
          "names-weak", "authors", "near", "cited-as", "cited-like")
RAW = ("bm25", "static", "static-context", "static-draft", "dense")  # agents whose raw score is comparable


def _agent(list_name: str) -> str:
    return list_name.split(":", 1)[0]


@dataclass(frozen=True)
class ListTops:
    """Each agent's best and second-best score in the slot's lists (for a candidate's gap to the others)."""

    best: Mapping[str, float]
    second: Mapping[str, float]

    @classmethod
    def of(cls, traces: Sequence[StageTrace]) -> "ListTops":
        scores: dict[str, list[float]] = {}
        for t in traces:
            if t.kind != "retriever" or not t.top:
                continue
            scores.setdefault(_agent(t.agent), []).extend(h.score for h in t.top[:2])
        best = {a: max(s) for a, s in scores.items()}
        second = {a: sorted(s, reverse=True)[1] if len(s) > 1 else 0.0 for a, s in scores.items()}
        return cls(best, second)


@dataclass(frozen=True)
class DraftFacts:
    """What the draft and the user's library say of a slot beyond its sentence: the years of the draft's other
    citations (the user's papers), and the literature papers cited with the ones the draft cites near the slot
    (co-citation; empty without a memory that says so)."""

    years: tuple[int, ...] = ()
    cocited: frozenset[str] = frozenset()

    @property
    def median_year(self) -> float | None:
        if not self.years:
            return None
        ys = sorted(self.years)
        return float(ys[len(ys) // 2])

    @property
    def newest(self) -> int | None:
        return max(self.years) if self.years else None


def evidence(candidate: Candidate, tops: ListTops, *, own: Mapping[str, float] | None = None,
             facts: DraftFacts | None = None, named: bool = False, cited: int = 0) -> dict[str, float]:
    """A literature candidate's features (see the module docstring). ``own``: what the user's papers say of it
    (:meth:`citefinder.pipeline.priors.OwnPapers.features`: shared surnames, topic, years newer)."""
    facts = facts if facts is not None else DraftFacts()
    f: dict[str, float] = {}
    agree = agree10 = 0
    for s in candidate.scores:
        if s.stage == "fused":
            f["fused_rr"] = 1.0 / max(1, s.rank)
            continue
        a = _agent(s.stage)
        if a not in AGENTS or s.rank <= 0:
            continue
        rr = 1.0 / s.rank
        if rr <= f.get(f"rr:{a}", 0.0):
            continue
        if f"rr:{a}" not in f:
            agree += 1
            agree10 += s.rank <= 10
        f[f"rr:{a}"] = rr
        best = tops.best.get(a, 0.0)
        if a in RAW and best > 0:
            other = tops.second.get(a, 0.0) if s.rank == 1 else best
            f[f"sc:{a}"] = s.score / best
            f[f"gap:{a}"] = (s.score - other) / best
            f[f"raw:{a}"] = math.log1p(max(0.0, s.score)) if a == "bm25" else s.score
    f["agree"] = float(agree)
    f["agree10"] = float(agree10)
    f["named"] = 1.0 if named else 0.0
    f["cited"] = math.log1p(max(0, cited))
    f["cocited"] = 1.0 if candidate.doc_id in facts.cocited else 0.0
    own = own or {}
    f["shared"] = min(3.0, float(own.get("shared", 0.0)))
    f["topic"] = float(own.get("topic", 0.0))
    year = candidate.paper.year
    median, newest = facts.median_year, facts.newest
    f["newer"] = 1.0 if year and newest and year > newest else 0.0
    f["age_gap"] = min(2.0, abs(year - median) / 10.0) if year and median else 0.0
    f["no_year"] = 0.0 if year else 1.0
    return f


def with_slot_features(feats: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
    """A slot's candidates' features with those read against the slot's other candidates: ``log_rank`` (the
    log of its place in the literature's fused order, 101 when the fusion did not list it) and ``topic_rel``
    (its topic against the best of the slot's)."""
    best = max((f.get("topic", 0.0) for f in feats), default=0.0) or 1.0
    out = []
    for f in feats:
        rr = f.get("fused_rr", 0.0)
        out.append({**f, "log_rank": math.log(1.0 / rr if rr else 101.0), "topic_rel": f.get("topic", 0.0) / best})
    return out


@dataclass(frozen=True)
class OfferModel:
    """p = sigmoid(bias + Σ weight·feature), fit on training slots (``citefinder/data/offers.json``). ``floor``:
    the probability under which an offer is not shown open; ``unsure``: where a person reads it as *unsure*."""

    weights: Mapping[str, float] = field(default_factory=dict)
    bias: float = -4.0
    floor: float = 0.1
    provenance: str = ""

    @classmethod
    def shipped(cls) -> "OfferModel":
        return _shipped()

    def probability(self, feats: Mapping[str, float]) -> float:
        z = self.bias + sum(w * float(feats.get(k, 0.0)) for k, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@lru_cache(maxsize=1)
def _shipped() -> OfferModel:
    from importlib import resources

    try:
        data = json.loads(resources.files("citefinder.data").joinpath("offers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return OfferModel()
    return OfferModel(dict(data.get("weights") or {}), float(data.get("bias", -4.0)), float(data.get("floor", 0.1)),
                      str(data.get("provenance", "")))


def offer_order(probabilities: Sequence[float]) -> list[int]:
    """The offers' indexes by probability, highest first (ties: the literature's own order): the only order
    a panel lists them in."""
    return sorted(range(len(probabilities)), key=lambda i: (-probabilities[i], i))


@dataclass(frozen=True)
class Panel:
    """What a slot's literature panel shows: ``open`` offers (at or above the floor), the ``collapsed`` ones
    (below it), and the one line that heads it, which counts what it shows."""

    open: tuple[Candidate, ...]
    collapsed: tuple[Candidate, ...]
    heading: str
    collapsed_label: str


def probability_of(c: Candidate) -> float:
    score = c.stage("literature")
    return float(score.score) if score is not None else 0.0


def panel(offers: Sequence[Candidate], *, limit: int, floor: float | None = None) -> Panel:
    """The panel of a slot's offers (best first by probability): at most ``limit``, those at or above ``floor``
    open, the others collapsed; its heading says how many it shows open."""
    floor = OfferModel.shipped().floor if floor is None else floor
    shown = sorted(offers, key=probability_of, reverse=True)[:limit]
    above = tuple(c for c in shown if probability_of(c) >= floor)
    below = tuple(c for c in shown if probability_of(c) < floor)
    if above:
        heading = f"{len(above)} {'paper' if len(above) == 1 else 'papers'} not in your library worth a look"
    else:
        heading = "nothing likely in the literature"
    label = (f"{len(below)} less likely" if above else f"{len(below)} unlikely papers") if below else ""
    return Panel(above, below, heading, label)


def summary(trace: StageTrace | None, shown: int) -> str:
    """The literature trace in one line for a panel that shows ``shown`` of its offers: what it shows, why it
    was asked, which agents found what (never a count it does not show)."""
    if trace is None:
        return ""
    ran = [t["agent"] for t in trace.details.get("traces", []) if t.get("kind") == "retriever" and t.get("top")]
    why = trace.inputs.get("why", "")
    source = trace.params.get("source", "the literature")
    return (f"{shown} of the papers {source} holds and your library does not, in order of their probability"
            + (f" ({why})" if why else "") + f"; ranked by {', '.join(ran) or 'no agent'}, in {trace.elapsed_s:.2f} s.")


def order_is_probability(offers: Sequence[Any]) -> bool:
    """Are ``offers`` listed in the order of their probability (what every panel must show)?"""
    ps = [probability_of(c) for c in offers]
    return all(a >= b for a, b in zip(ps, ps[1:], strict=False))


def moved_first(reordered: Sequence[Candidate], original: Sequence[Candidate]) -> set[str]:
    """The doc ids a reordering put ahead of ``original``'s order (the named work's own papers that
    :func:`citefinder.select.named.named_first` brings first, found by the ranking or added)."""
    ids = [c.doc_id for c in reordered]
    for k in range(len(ids) + 1):
        head = set(ids[:k])
        if ids[k:] == [c.doc_id for c in original if c.doc_id not in head]:
            return head
    return set(ids)
