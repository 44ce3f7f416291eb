"""The probability that a cited key fits its context, and the verdict in words.

A logistic model over :mod:`citefinder.check.features`, fit by ``bench/check_eval.py fit`` on the
drafts-dev TRAINING part only: each real citation of those drafts (label 1) against random other keys
of the same .bib put in its place (label 0), weighted so that one key in ten is wrong (``PRIOR_WRONG``,
the rate the benchmark swaps). The thresholds of the verdicts are chosen on the same training part
(out of fold): *doubtful* below the probability that 8% of correct keys fall under, *likely wrong*
below that of 2%. Shipped as ``citefinder/data/check.json`` with its provenance.

The verdict is a band of the probability as shown (two decimals): the words are defined by the number, so a
page that shows "0.77" and a word never disagree (:meth:`FitModel.bands`, said once on the page).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

FIT_FEATURES = ("in_list", "rr_fused", "p_engine", "alt_p", "dense_cos", "dense_gap", "dense_pct", "window_cos",
                "window_gap", "window_pct", "bm25_pct", "bm25_raw", "log_library", "key_named", "elsewhere",
                "elsewhere_cos", "co_cited", "co_cos", "reverse_pct", "reverse_wpct", "wbm25_pct", "wbm25_raw",
                "best_cos", "words", "nearby_cos", "hub", "alt_uncited_p", "named", "named_weak", "other_named",
                "other_named_weak", "log_rank", "rank_share", "cousin_alt_p", "cousin_alt_gap", "cousin_tell_alt",
                "cousin_tell_key", "tell_gap")
PRIOR_WRONG = 0.1
FITS, DOUBTFUL, WRONG = "fits", "doubtful", "likely wrong"


@dataclass(frozen=True)
class FitModel:
    """``p = sigmoid(intercept + Σ coef_f * (x_f - mean_f) / scale_f)``; verdicts by two thresholds."""

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    doubtful_below: float
    wrong_below: float
    provenance: str = ""

    def probability(self, feats: Mapping[str, float]) -> float:
        z = self.intercept
        for name, w, m, s in zip(self.features, self.coef, self.mean, self.scale, strict=True):
            z += w * (float(feats.get(name, 0.0)) - m) / (s or 1.0)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def verdict(self, p: float) -> str:
        """The band the probability falls in, compared as shown (two decimals) with the thresholds as shown."""
        shown = round(p, 2)
        if shown < round(self.wrong_below, 2):
            return WRONG
        return DOUBTFUL if shown < round(self.doubtful_below, 2) else FITS

    def bands(self) -> tuple[tuple[str, float, float], ...]:
        """(verdict, from, below) for each word, as shown: fits [doubtful_below, 1], doubtful [wrong_below,
        doubtful_below), likely wrong [0, wrong_below)."""
        doubtful, wrong = round(self.doubtful_below, 2), round(self.wrong_below, 2)
        return ((FITS, doubtful, 1.0), (DOUBTFUL, wrong, doubtful), (WRONG, 0.0, wrong))

    def legend(self) -> str:
        """The bands in words, once for a page or a report: "fits: 0.77 or more · doubtful: 0.57 to 0.76 · ..."."""
        (_, fits, _), (_, doubtful, _), (_, _, wrong) = self.bands()
        return (f"{FITS}: {fits:.2f} or more · {DOUBTFUL}: {doubtful:.2f} to {fits - 0.01:.2f} · "
                f"{WRONG}: below {wrong:.2f} (or a key your .bib lacks)")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FitModel":
        return cls(tuple(d["features"]), tuple(float(x) for x in d["coef"]), float(d["intercept"]),
                   tuple(float(x) for x in d["mean"]), tuple(float(x) for x in d["scale"]),
                   float(d["doubtful_below"]), float(d["wrong_below"]), str(d.get("provenance", "")))


def default_model() -> FitModel:
    """The model shipped with CiteFinder (``citefinder/data/check.json``)."""
    text = resources.files("citefinder.data").joinpath("check.json").read_text(encoding="utf-8")
    return FitModel.from_dict(json.loads(text))
