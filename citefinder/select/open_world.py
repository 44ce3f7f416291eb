"""The literature as an open-world check: a fill the literature clearly beats is withdrawn, and its paper offered.

CiteFinder fills a slot only with a paper of the user's library (closed world). When the paper a sentence cites
is missing from the library, the best of the user's papers can still look confident: on drafts-dev's test part,
12 of 99 slots whose cited paper was removed from the .bib were auto-filled with another entry. With a
literature set (a literature library or an online source, :mod:`citefinder.pipeline.literature`), the slot's
best literature paper is a second opinion: when it is clearly a better answer than the user's pick, the pick is
not filled in and the literature paper (first among those offered) is the answer the card shows.

The literature's paper compared is its best by its own calibrated probability (:func:`best_literature`), not the
first of the list the priors reordered; and a fill whose sentence names a work the literature holds, when the fill
is not that work (:func:`named_in_literature`), is withdrawn whatever the numbers, the named paper offered first.

"Clearly better" is a calibrated comparison: the probability that the user's pick is right given its own
confidence and the literature's best confidence, ``sigmoid(a + b * logit(own) + c * logit(literature))``, fit by
``bench/open_world.py fit`` on the drafts-dev TRAINING part with the cited paper removed from the library for a
seeded half of the slots whose paper the literature holds (the pipeline's ``exclude``), and the fill withdrawn
below ``below``, chosen there so that few removed slots keep a wrong fill and few right fills are lost. Shipped as
``citefinder/data/open_world.json``. Without a literature the rule has nothing to compare and the library alone
decides (the auto-fill rule's margins, :mod:`citefinder.rank.calibration`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

from citefinder.retrieve.query import naming
from citefinder.types import Candidate, SlotResult, StageTrace

CHECKED_METHODS = ("threshold",)  # a user's pick and an LLM's choice are theirs


def _logit(p: float) -> float:
    q = min(max(float(p), 1e-4), 1 - 1e-4)
    return math.log(q / (1 - q))


@dataclass(frozen=True)
class OpenWorld:
    """``p_own_right = sigmoid(intercept + own * logit(own confidence) + lit * logit(literature's best))``; a fill
    whose ``p_own_right`` is below ``below`` is withdrawn."""

    intercept: float
    own: float
    lit: float
    below: float
    provenance: str = ""

    def p_own_right(self, own_p: float, lit_p: float) -> float:
        z = self.intercept + self.own * _logit(own_p) + self.lit * _logit(lit_p)
        return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0

    def withdraws(self, own_p: float, lit_p: float) -> bool:
        """Whether the literature's best (confidence ``lit_p``) is clearly a better answer than a fill at ``own_p``:
        more probable than the fill, and the fill unlikely right beside it."""
        return lit_p > own_p and self.p_own_right(own_p, lit_p) < self.below

    def could_withdraw(self, own_p: float) -> bool:
        """Whether any literature paper could withdraw a fill this confident (the literature is worth asking)."""
        return self.withdraws(own_p, 1 - 1e-4)

    @classmethod
    def from_dict(cls, d: dict) -> "OpenWorld":
        return cls(float(d["intercept"]), float(d["own"]), float(d["lit"]), float(d["below"]),
                   str(d.get("provenance", "")))

    def to_dict(self) -> dict:
        return {"intercept": self.intercept, "own": self.own, "lit": self.lit, "below": self.below,
                "provenance": self.provenance}


@lru_cache(maxsize=1)
def default_open_world() -> OpenWorld | None:
    """The rule shipped with CiteFinder (``citefinder/data/open_world.json``), or None when none was fit."""
    path = resources.files("citefinder.data").joinpath("open_world.json")
    if not path.is_file():
        return None
    return OpenWorld.from_dict(json.loads(path.read_text(encoding="utf-8")))


def best_literature(result: SlotResult) -> Candidate | None:
    """The slot's best literature paper by its own calibrated probability (its "literature" score), whatever its
    place in the list the priors and the name rule reordered; None without one."""
    scored = [c for c in result.literature if c.stage("literature") is not None]
    return max(scored, key=lambda c: c.stage("literature").score) if scored else None  # type: ignore[union-attr]


def named_in_literature(result: SlotResult) -> Candidate | None:
    """The literature paper that is the work the slot's sentence names, when the fill is not that work (the
    named-slot detector and the names of both papers, :mod:`citefinder.retrieve.query.naming`); else None."""
    sel = result.selection
    focus = result.slot.focus or result.slot.sentence if result.slot is not None else ""
    mention = naming.mention_in(focus) if focus and sel.paper is not None else None
    if mention is None or mention.reading == "person" or sel.paper is None:
        return None
    if naming.relation(mention, naming.names_of(sel.paper)) == "same":
        return None
    return next((c for c in result.literature if naming.relation(mention, naming.names_of(c.paper)) == "same"), None)


def check(result: SlotResult, rule: OpenWorld | None) -> SlotResult:
    """``result`` with its auto-fill withdrawn when the literature holds the work its sentence names and the fill is
    not it, or when its best literature paper (by its own probability) is clearly a better answer; the select trace
    and the selection's reasoning say why and that paper is offered first. Unchanged otherwise, and always without a
    literature."""
    sel = result.selection
    if sel.status != "found" or sel.paper is None or sel.method not in CHECKED_METHODS or not result.literature:
        return result
    named = named_in_literature(result)
    best = named or best_literature(result)
    score = best.stage("literature") if best is not None else None
    if best is None or score is None:
        return result
    p = rule.p_own_right(sel.confidence, score.score) if rule is not None else 1.0
    if named is not None:
        why = (f"the sentence names {best.paper.title[:80]!r}, which the literature holds and your "
               f"{sel.paper.title!r} is not: nothing is filled in; the literature's paper is offered first")
    elif rule is not None and rule.withdraws(sel.confidence, score.score):
        why = (f"the literature's {best.paper.title!r} (confidence {score.score:.2f}) is a better answer than your "
               f"{sel.paper.title!r} ({sel.confidence:.2f}): the chance that yours is the cited paper is {p:.2f}, "
               f"below {rule.below:.2f}, so nothing is filled in; the literature's paper is offered first")
    else:
        return result
    note = {"withdrawn": sel.paper.doc_id, "offered": best.doc_id, "p_own_right": round(p, 4),
            "literature_confidence": round(score.score, 4), "named": named is not None, "why": why}
    traces = tuple(_noted(t, why, note) if t.agent == "select" else t for t in result.traces)
    literature = (best, *(c for c in result.literature if c.doc_id != best.doc_id))
    return replace(result, selection=replace(sel, status="not_found", paper=None, also=(),
                                             reasoning=f"{sel.reasoning}; {why}".lstrip("; ")),
                   traces=traces, literature=literature)


def _noted(trace: StageTrace, why: str, note: dict) -> StageTrace:
    return replace(trace, message=f"{trace.message}; {why}",
                   details={**trace.details, "selected": None, "open_world": note})


def withdrawn_why(result: SlotResult) -> str | None:
    """Why this slot's fill was withdrawn for a literature paper, or None."""
    trace = result.trace("select")
    note = trace.details.get("open_world") if trace is not None else None
    return str(note["why"]) if isinstance(note, dict) and note.get("why") else None
