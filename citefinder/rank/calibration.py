"""Calibrated confidence: the probability that a candidate is the right paper, from its candidate list.

A logistic model over features of the fused list — each agent's reciprocal rank of the candidate,
how many agents put it first, its fused score and its margin over the next candidate, the dense
cosine, the library's size — fit on the training split only (``bench/tune.py``: drafts-dev train
part, CiteME train, autoscholar-dev) and shipped as data in ``citefinder/data/confidence.json``
with its AUC and reliability table (also in bench/RESULTS.md). The earlier eight agreement buckets
gave every pick 0.39, right or wrong; features that see *how* the agents agree separate the two.

The model is fit on top-1 candidates; for lower candidates the same features give a usable but
less calibrated score (shown to the LLM selector and in traces, never used to fill a slot).

A library smaller than any it was fit on (``min_library``, the smallest training library) is outside
the model's range: there, being ranked first, by many agents and far ahead of the next candidate says
little (with one paper, every agent puts it first), so the features of rank and agreement — and the
library size itself — are drawn toward their training mean, by ``(ln n / ln min_library)²``, until only
how well the paper's words and vector match the context speak. A candidate with no runner-up has no
margin: its margin features are the mean too. Above ``min_library`` nothing changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from citefinder.types import Candidate

LIKELY, UNSURE, UNLIKELY = "likely right", "unsure", "unlikely"
LIKELY_AT, UNSURE_AT = 0.7, 0.4
# features that say how a candidate stands against the others (and how many others there are)
RELATIVE = ("rr_", "firsts", "first_share", "fused_rel", "margin", "second_firsts", "log_library")
RUNNER_UP = ("margin", "second_firsts")  # meaningless without a runner-up


def confidence_words(p: float) -> str:
    """The confidence as a person reads it: likely right, unsure or unlikely, by :func:`word_cutoffs`."""
    likely, unsure = word_cutoffs()
    if p >= likely:
        return LIKELY
    if p >= unsure:
        return UNSURE
    return UNLIKELY


@lru_cache(maxsize=1)
def word_cutoffs() -> tuple[float, float]:
    """(likely right from, unsure from): the shipped model's own (``adjust.words`` of confidence.json, chosen on
    drafts-dev's training part so that top candidates called *likely right* were right at least 85% of the time and
    those called *unlikely* under 20%, in libraries of every size: bench/tune.py adjust), else 0.7 and 0.4."""
    words = json.loads(resources.files("citefinder.data").joinpath("confidence.json").read_text(encoding="utf-8")
                       ).get("adjust", {}).get("words") or {}
    return float(words.get("likely", LIKELY_AT)), float(words.get("unsure", UNSURE_AT))


# Candidates below the top: p = sigmoid(a + b * logit(number capped at the one above) + c * log(rank)), fit on
# the drafts-dev training part only (bench/lower_ranks.py; figures in bench/RESULTS.md).
LOWER_RANKS: tuple[float, float, float] | None = (-0.9090, 0.3859, -0.7199)


def shown_probabilities(values: Sequence[float],
                        lower: tuple[float, float, float] | None = LOWER_RANKS) -> list[float]:
    """The probability that each candidate (in the shown order) is the cited paper, as one ranking reads:
    never above a candidate shown before it. The model is fit on top candidates (:class:`Calibration`); for a
    lower one its number can exceed the top's and overstate how often it is right, so below the top it is
    capped at the number above and then read through ``lower`` (see :data:`LOWER_RANKS`)."""
    out: list[float] = []
    for rank, v in enumerate(values, start=1):
        p = min(float(v), out[-1]) if out else float(v)
        if out and lower is not None:
            a, b, c = lower
            q = min(max(p, 1e-4), 1 - 1e-4)
            p = min(p, 1.0 / (1.0 + math.exp(-(a + b * math.log(q / (1 - q)) + c * math.log(rank)))))
        out.append(p)
    return out


def candidate_features(
    candidates: Sequence[Candidate],
    i: int,
    agents_ran: Sequence[str],
    library_size: int,
    agents: Sequence[str] | None = None,
    draft_slots: int | None = None,
    text: str = "",
) -> dict[str, float]:
    """Features of candidate ``i`` of a fused list (each has a "fused" stage score).

    ``text``: the slot's sentence; with it, whether the runner-up is a close relative of the candidate and whether the
    sentence tells the two apart (:func:`~citefinder.rank.relatives.cousin_features`), read by the adjustment only.

    ``draft_slots``: how many slots the draft being filled has (None: not a draft's slot — a search, a check of
    a written citation, a benchmark item); it is not a feature of the logistic model but of its adjustment
    to the library's size and the draft's length (:attr:`Calibration.adjust`).
    Only ``agents`` count (default: those the registry says the confidence reads,
    :func:`~citefinder.retrieve.registry.feature_agents`): an agent it does not read changes no feature,
    also when it runs."""
    if agents is None:
        from citefinder.retrieve.registry import feature_agents

        agents = feature_agents()
    c = candidates[i]
    f: dict[str, float] = {}
    ran = [a for a in agents_ran if a in agents]
    firsts = 0
    for a in agents:
        s = c.stage(a)
        f[f"rr_{a}"] = 1.0 / s.rank if s is not None else 0.0
        f[f"ran_{a}"] = 1.0 if a in ran else 0.0
        # the agent's own score: a BM25 score grows with the words matched, a cosine with the closeness
        f[f"raw_{a}"] = math.log1p(max(0.0, s.score)) if s is not None else 0.0
        firsts += int(s is not None and s.rank == 1)
    f["firsts"] = float(firsts)
    f["first_share"] = firsts / max(1, len(ran))
    fused = _fused(c)
    top = _fused(candidates[0]) or 1.0
    nxt = _fused(candidates[i + 1]) if i + 1 < len(candidates) else 0.0
    f["fused_rel"] = fused / top
    f["margin"] = (fused - nxt) / fused if fused > 0 else 0.0
    dense = c.stage("dense")
    f["dense_cos"] = dense.score if dense is not None else 0.0
    # how strongly the agents back the runner-up: a close second that many agents like makes the top less sure
    if i + 1 < len(candidates):
        second = candidates[i + 1]
        f["second_firsts"] = float(sum(1 for a in agents if (s := second.stage(a)) is not None and s.rank == 1))
    else:
        f["second_firsts"] = 0.0
    # whether the candidate and its runner-up have an abstract: an entry with one is matched by more words, so a
    # top-1 ahead of an entry without one is ahead partly by its text's length (read by the adjustment only)
    f["abstract"] = 1.0 if c.paper.abstract.strip() else 0.0
    runner_abstract = 1.0 if i + 1 < len(candidates) and candidates[i + 1].paper.abstract.strip() else 0.0
    f["abstract_diff"] = f["abstract"] - runner_abstract if i + 1 < len(candidates) else 0.0
    f["log_library"] = math.log10(max(1, library_size))
    f["library"] = float(library_size)  # not a model feature: how far outside the training range (see below)
    f["runner_up"] = 1.0 if i + 1 < len(candidates) else 0.0  # not a model feature either
    if draft_slots is not None:
        f["draft_slots"] = float(draft_slots)  # read by the adjustment only
    if text:
        from citefinder.rank.relatives import cousin_features

        f.update(cousin_features(text, c.paper, candidates[i + 1].paper if i + 1 < len(candidates) else None))
    return f


# features of the top candidate the adjustment may read as they are: they say how the top stands against the
# runner-up in any paper (margin, the agents' agreement, a name next to the marker naming it, an abstract the
# runner-up lacks), so a rule fit on some papers holds on others (bench/autofill.py fit)
TRANSFER = ("margin", "first_share", "second_firsts", "abstract", "abstract_diff", "rr_names", "rr_names-weak",
            "rr_title", "rr_keys")
# the runner-up a close relative of the top, and whether the sentence tells the two apart (rank/relatives.py): a
# confident pick among unrelated candidates needs less margin than one between siblings (issue 49)
COUSIN = ("cousin", "cousin_name", "tell_top", "tell_runner", "cousin_untold")


def adjust_terms(p: float, feats: Mapping[str, float]) -> dict[str, float]:
    """The terms :meth:`Calibration.adjusted` may read: the model's log-odds, the library's size and the draft's
    number of slots (log10), their products, the :data:`TRANSFER` features of the top candidate, and the
    :data:`COUSIN` features with their products with the margin and the log-odds."""
    q = min(max(p, 1e-4), 1 - 1e-4)
    logit = math.log(q / (1 - q))
    lib = math.log10(max(1.0, feats.get("library", 1.0)))
    slots = math.log10(max(1.0, feats.get("draft_slots", 1.0)))
    alone = feats.get("runner_up", 1.0) == 0.0
    return {"logit": logit, "log_library": lib, "log_slots": slots, "logit_x_log_library": logit * lib,
            "logit_x_log_slots": logit * slots, "log_library_x_log_slots": lib * slots,
            # no runner-up: as far ahead as a top-1 can be
            **{t: (1.0 if t == "margin" else 0.0) if alone and t in RUNNER_UP + ("abstract_diff",)
               else float(feats.get(t, 0.0)) for t in TRANSFER},
            **{t: 0.0 if alone else float(feats.get(t, 0.0)) for t in COUSIN},
            "cousin_x_margin": 0.0 if alone else float(feats.get("cousin", 0.0)) * float(feats.get("margin", 0.0)),
            "cousin_x_logit": 0.0 if alone else float(feats.get("cousin", 0.0)) * logit,
            "untold_x_logit": 0.0 if alone else float(feats.get("cousin_untold", 0.0)) * logit}


def _fused(c: Candidate) -> float:
    s = c.stage("fused")
    return s.score if s is not None else 0.0


@dataclass(frozen=True)
class Calibration:
    """A logistic model: ``p = sigmoid(intercept + Σ coef_f * (x_f - mean_f) / scale_f)``."""

    features: tuple[str, ...] = ()
    coef: tuple[float, ...] = ()
    intercept: float = 0.0
    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    provenance: str = ""
    reliability: tuple[Mapping[str, float], ...] = field(default_factory=tuple)
    min_library: int = 0  # the smallest library in the training data (0: no tiny-library rule)
    # the probability adjusted to the library's size and the draft's length (see :meth:`adjusted`); {} = none
    adjust: Mapping[str, Any] = field(default_factory=dict)

    def weight(self, library_size: float | None) -> float:
        """How much rank and agreement count in a library of this size: 1 from ``min_library`` papers on,
        ``(ln n / ln min_library)²`` below (0 for one paper)."""
        if not self.min_library or library_size is None or library_size >= self.min_library:
            return 1.0
        return (math.log(max(1.0, library_size)) / math.log(self.min_library)) ** 2

    def probability(self, feats: Mapping[str, float]) -> float:
        z = self.intercept
        s = self.weight(feats.get("library"))
        alone = feats.get("runner_up", 1.0) == 0.0
        for name, w, m, sc in zip(self.features, self.coef, self.mean, self.scale, strict=True):
            x = float(feats.get(name, 0.0))
            if alone and name in RUNNER_UP:
                x = m
            elif s < 1.0 and name.startswith(RELATIVE):
                x = m + s * (x - m)
            z += w * (x - m) / (sc or 1.0)
        p = 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0
        return self.adjusted(p, feats) if self.adjusts(feats) else p

    def adjusts(self, feats: Mapping[str, float]) -> bool:
        """Whether :meth:`adjusted` applies: a draft's slot (``draft_slots`` known) of a draft and a library of the
        sizes it was fit on (``min_slots`` slots or more; ``min_library``..``max_library`` papers). Elsewhere the
        logistic model alone: larger libraries (it was fit on 50k-paper ones too), smaller ones (its own
        tiny-library rule), and pastes of a few sentences, which no adjustment was measured on."""
        a = self.adjust
        return bool(a) and feats.get("draft_slots", 0.0) >= float(a.get("min_slots", 1)) and \
            float(a.get("min_library", 0)) <= feats.get("library", 0.0) <= float(a["max_library"])

    def adjusted(self, p: float, feats: Mapping[str, float]) -> float:
        """The logistic model's probability recalibrated for the library's size and the draft's length:
        ``sigmoid(a + Σ c_t * t)`` over :func:`adjust_terms` (fit on drafts-dev's training part cut into short
        and long drafts against libraries of 45 to 540 papers: ``bench/tune.py adjust``). A short draft against
        a library of papers it mostly does not cite is right less often than a whole paper against its own .bib
        at the same agreement of the agents; the logistic model alone cannot tell the two apart."""
        terms = adjust_terms(p, feats)
        z = float(self.adjust["intercept"]) + sum(
            float(c) * terms[t] for t, c in zip(self.adjust["terms"], self.adjust["coef"], strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def confidences(
        self, candidates: Sequence[Candidate], agents_ran: Sequence[str], library_size: int,
        draft_slots: int | None = None, text: str = "",
    ) -> dict[str, float]:
        """doc_id -> calibrated probability of being the cited paper, for every candidate (``draft_slots``: the
        slot is one of a draft of that many; ``text``: its sentence, see :func:`candidate_features`)."""
        return {
            c.doc_id: round(self.probability(
                candidate_features(candidates, i, agents_ran, library_size, draft_slots=draft_slots, text=text)), 4)
            for i, c in enumerate(candidates)
        }

    def explain(self, candidates: Sequence[Candidate], agents_ran: Sequence[str], library_size: int,
                draft_slots: int | None = None, text: str = "") -> dict[str, Any]:
        """Why the top candidate has its confidence: its agents' ranks and the strongest reasons, in words."""
        if not candidates:
            return {}
        feats = candidate_features(candidates, 0, agents_ran, library_size, draft_slots=draft_slots, text=text)
        p = self.probability(feats)
        firsts = [a for a in agents_ran if (s := candidates[0].stage(a)) is not None and s.rank == 1]
        ranks = {a: (s.rank if (s := candidates[0].stage(a)) is not None else None) for a in agents_ran}
        parts = [f"{len(firsts)} of {len(agents_ran)} agents put it first"
                 + (f" ({', '.join(firsts)})" if firsts else "")]
        if not feats["runner_up"]:
            parts.append("no other candidate to compare it with")
        elif feats["margin"] >= 0.3:
            parts.append("well ahead of the next candidate")
        elif feats["margin"] < 0.05:
            parts.append("nearly tied with the next candidate")
        if feats.get("cousin"):
            parts.append("the next candidate is a close relative" + (
                " the sentence does not tell apart from it" if feats.get("cousin_untold")
                else ": the sentence has words only this one holds"))
        if self.weight(library_size) < 1.0:
            parts.append(f"a library of {library_size} papers tells little (the confidence was fit on libraries of "
                         f"{self.min_library} or more): only how well it matches the text counts fully")
        adjusted = self.adjusts(feats)
        if adjusted:
            parts.append(f"adjusted for a library of {library_size} papers and a draft of {draft_slots} slots")
        level = self.level(p, adjusted)
        if level:
            parts.append(f"top candidates scored {level['label']} were right {level['precision']:.0%} of the time "
                         f"on training drafts it was not fit on ({int(level['n'])} slots)")
        return {"probability": round(p, 4), "words": confidence_words(p), "ranks": ranks,
                "explanation": "; ".join(parts), "features": {k: round(v, 4) for k, v in feats.items()}}

    def level(self, p: float, adjusted: bool = False) -> Mapping[str, Any] | None:
        """The reliability-table row (out of fold on training data) that ``p`` falls in (``adjusted``: the
        adjustment's own table)."""
        rows = self.adjust.get("reliability", ()) if adjusted and self.adjust else self.reliability
        for row in rows:
            if row["lo"] <= p < row["hi"] or (row["hi"] >= 1.0 and p >= row["lo"]):
                return row
        return None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Calibration":
        return cls(
            features=tuple(d["features"]),
            coef=tuple(float(x) for x in d["coef"]),
            intercept=float(d["intercept"]),
            mean=tuple(float(x) for x in d["mean"]),
            scale=tuple(float(x) for x in d["scale"]),
            provenance=str(d.get("provenance", "")),
            reliability=tuple(d.get("reliability", ())),
            min_library=int(d.get("min_library", 0)),
            adjust=dict(d.get("adjust") or {}),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "coef": list(self.coef), "intercept": self.intercept,
                "mean": list(self.mean), "scale": list(self.scale), "provenance": self.provenance,
                "reliability": [dict(r) for r in self.reliability], "min_library": self.min_library,
                **({"adjust": dict(self.adjust)} if self.adjust else {})}


def default_calibration() -> Calibration:
    """The model shipped with CiteFinder (``citefinder/data/confidence.json``)."""
    text = resources.files("citefinder.data").joinpath("confidence.json").read_text(encoding="utf-8")
    return Calibration.from_dict(json.loads(text))
