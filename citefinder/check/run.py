"""Check every cited key of a draft: one retrieval per cite command, then for each of its keys the
engine's rank of that key's paper, the probability that it fits (:mod:`citefinder.check.model`), a
verdict in words, and the papers of the library that fit the context better, with the evidence."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from citefinder.check.features import (
    ALTERNATIVES_FROM,
    NEARBY,
    Contexts,
    Ranked,
    Vectors,
    fit_features,
    rank_context,
)
from citefinder.check.model import DOUBTFUL, FITS, WRONG, FitModel, default_model
from citefinder.index.names import normalize_name
from citefinder.select.named import Owners, described, match_name, named_work, overruled
from citefinder.text.citations import Citation

if TYPE_CHECKING:
    from citefinder.pipeline.pipeline import Pipeline

log = logging.getLogger(__name__)

MAX_ALTERNATIVES = 3
ALT_AT_LEAST, ALT_ODDS = 0.4, 2.0  # an alternative's probability: "unsure" or better, twice the key's odds
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Alternative:
    """A paper of the library that fits a citation's context better than the key written there."""

    doc_id: str
    title: str
    key: str | None  # its key in the user's .bib (None: the library has it from elsewhere)
    year: int | None
    probability: float
    rank: int  # its place in the engine's ranking for this context
    evidence: str  # which agents put it where, and the engine's confidence

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckedCitation:
    """One cited key, judged. ``index`` is its place among the draft's citations (text order)."""

    index: int
    key: str
    file: str
    line: int
    command: str
    sentence: str
    verdict: str
    probability: float
    rank: int | None  # the key's paper in the engine's ranking for this context; None: not ranked (or no entry)
    ranked: int  # how many papers it was ranked among
    title: str = ""  # the key's entry in the .bib
    reason: str = ""
    alternatives: tuple[Alternative, ...] = field(default_factory=tuple)
    # the sentence with this citation's command as [CITATION] and every other one as [OTHER] (which one is judged)
    focus: str = ""
    position: int = 1  # the key's place in its cite command (from 1)
    keys_in_command: int = 1

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["alternatives"] = [a.to_dict() for a in self.alternatives]
        return d


def _evidence(ranked: Ranked, doc_id: str, p_engine: float) -> str:
    cand = next((c for c in ranked.candidates if c.doc_id == doc_id), None)
    parts = []
    if cand is not None:
        parts = [f"{s.stage} #{s.rank}" for s in cand.scores if s.stage in ranked.ran and s.rank <= 10]
    cos = ranked.cosine.get(doc_id)
    if cos is not None:
        parts.append(f"cosine {cos:.2f}")
    if p_engine:
        parts.append(f"engine confidence {p_engine:.2f}")
    return ", ".join(parts) or "no agent ranked it in its top 10"


def alternative_probabilities(ranked: Ranked, cands: Sequence[Any]) -> list[float]:
    """The probability that each of the top candidates is the paper cited here, as the Cite page shows it: the
    engine's calibrated confidence (fit on the drafts-dev training part, :mod:`citefinder.rank.calibration`), a
    lower candidate never above the one before it and read through the lower-ranks fit. The same question as the
    verdict's probability ("is this the cited paper?"), so the two can be compared."""
    from citefinder.rank.calibration import candidate_features, default_calibration, shown_probabilities

    calibration = default_calibration()
    size = max(1, ranked.size)
    top = cands[:ALTERNATIVES_FROM]
    return shown_probabilities([calibration.probability(candidate_features(top, i, ranked.ran, size))
                                for i in range(len(top))])


def clearly_more_probable(alternative: float, key: float) -> bool:
    """An alternative is offered when it is at least :data:`ALT_AT_LEAST` probable and its odds are
    :data:`ALT_ODDS` times the written key's."""
    if alternative < ALT_AT_LEAST:
        return False
    odds = alternative / max(1e-6, 1.0 - alternative)
    return odds >= ALT_ODDS * key / max(1e-6, 1.0 - key)


def judge(ranked: Ranked, doc_id: str | None, exclude: frozenset[str], model: FitModel, *,
          keys_of: Mapping[str, str], key: str = "", elsewhere: Sequence[Any] = (),
          vectors: Vectors | None = None, contexts: Contexts | None = None, nearby: Sequence[str] = (),
          uncited: frozenset[str] = frozenset()) -> tuple[float, int | None, str, tuple[Alternative, ...]]:
    """(probability, rank, reason, better alternatives) of ``doc_id`` as the paper cited in ``ranked``."""
    cands = [c for c in ranked.candidates if c.doc_id not in exclude or c.doc_id == doc_id]
    if doc_id is None:
        p, rank, reason = 0.0, None, "no entry in your .bib"
    else:
        f = fit_features(ranked, doc_id, exclude=exclude, key=key, elsewhere=elsewhere, vectors=vectors,
                         contexts=contexts, nearby=nearby, uncited=uncited)
        p = model.probability(f)
        rank = next((i + 1 for i, c in enumerate(cands) if c.doc_id == doc_id), None)
        reason = (f"ranked {rank} of {ranked.size}" if rank else f"not in the engine's top {len(cands)} of "
                  f"{ranked.size}") + f"; cosine {f['dense_cos']:.2f} (best {ranked.best_cosine:.2f})"
    better: list[Alternative] = []
    shown = alternative_probabilities(ranked, cands)
    for i, c in enumerate(cands[:ALTERNATIVES_FROM]):
        if c.doc_id == doc_id or not clearly_more_probable(shown[i], p):
            continue
        alt_key = keys_of.get(c.doc_id, "")
        better.append(Alternative(c.doc_id, c.paper.title, alt_key or None, c.paper.year, round(shown[i], 4),
                                  i + 1, _evidence(ranked, c.doc_id, 0.0)))
    better.sort(key=lambda a: -a.probability)
    return p, rank, reason, tuple(better[:MAX_ALTERNATIVES])


def named_alternatives(named: Sequence[str], doc: str | None, papers_of: Callable[[Sequence[str]], list[Any]],
                       keys_of: Mapping[str, str], better: tuple[Alternative, ...]) -> tuple[Alternative, ...]:
    """``better`` with the named work's own papers of the library first (the fill would have filled one of them)."""
    from citefinder.select.named import tuned

    p = float(tuned().get("promoted_confidence", 0.0))
    first = [Alternative(x.doc_id, x.title, keys_of.get(x.doc_id) or None, x.year, p, 0,
                         "the sentence names it: its own paper") for x in papers_of([d for d in named if d != doc])]
    ids = {a.doc_id for a in first}
    return tuple([*first, *(a for a in better if a.doc_id not in ids)][:MAX_ALTERNATIVES])


def named_stands(named: Sequence[str], doc: str | None, cited_here: set[str]) -> bool:
    """Whether the name rule's verdict on a written key stands: the named work's own paper is in the library (else
    there is no better key to offer: a draft may cite a survey or a later paper for a name whose paper it lacks),
    the key is not one of them, and no other key of the same command or sentence is (in "REINFORCE \\cite{williams,
    sutton}" the name is the first key's; the second is cited beside it)."""
    own = [d for d in named if d != doc]
    return bool(own) and doc not in named and not (set(own) & cited_here)


def name_verdict(focus: str, paper: Any, candidates: Sequence[Any], owners: Owners, cited_here: set[str]
                 ) -> tuple[str, tuple[str, ...]] | None:
    """Why the sentence's name says a written key is not the paper it names, and the named work's own papers (the
    fill's rule, :func:`~citefinder.select.named.overruled`, or :func:`not_the_named`) when that stands
    (:func:`named_stands`); else None."""
    if paper is None:
        return None
    named = overruled(focus, paper, candidates, owners) or not_the_named(focus, paper, owners)
    return named if named is not None and named_stands(named[1], paper.doc_id, cited_here) else None


def not_the_named(focus: str, paper: Any, owners: Owners) -> tuple[str, tuple[str, ...]] | None:
    """A written key checked by the sentence's name beyond the fill's rule: the sentence names a work ("We compare
    with GloamFlow [CITATION]"), the library holds that work's own paper, and the key's paper is not it (the base
    method's paper written for its extension, another work's) nor described by the words before the marker. Why, and
    the named work's own papers; None otherwise (no name, the named paper missing, or the key is it)."""
    name = named_work(focus)
    if not name:
        return None
    found = owners.of(name)
    if not found or paper.doc_id in found:
        return None
    pick = match_name(name, paper, owners.memory(normalize_name(name)))
    if pick.named or described(focus, name, paper):
        return None
    return f"the sentence names {name}: {pick.why}", found


def overruled_probability(model: FitModel) -> float:
    """The probability shown for a key the name rule overrules: the chance that the named work's own paper is not
    the right one (1 - its measured precision when put first, select/named.py), and never above the *likely
    wrong* band, so that the word follows the number."""
    from citefinder.select.named import tuned

    cap = 1.0 - float(tuned().get("promoted_precision", 0.0))
    return max(0.0, min(cap, round(model.wrong_below, 2) - 0.01))


def check_citations(
    pipeline: "Pipeline",
    citations: Sequence[Citation],
    doc_of: Mapping[str, str],
    *,
    draft: str = "",
    where: Callable[[int], tuple[str, int]] | None = None,
    model: FitModel | None = None,
    progress: Progress | None = None,
) -> list[CheckedCitation]:
    """Judge every citation: ``doc_of`` maps the .bib's keys to library papers; ``where(pos)`` names the
    file and line of a position of the text (default: "", the line in the text)."""
    model = model or default_model()
    keys_of: dict[str, str] = {}
    for key, doc_id in doc_of.items():
        keys_of.setdefault(doc_id, key)
    papers = {p.doc_id: p for p in pipeline.library.get(sorted(set(doc_of.values())))}
    groups = sorted({c.group for c in citations})
    index = {id(c): i for i, c in enumerate(citations)}
    out: list[CheckedCitation] = []
    t0 = time.perf_counter()
    vectors = Vectors(pipeline.library, pipeline.settings.exact_dense_max)
    owners = Owners(pipeline.library)

    def papers_of(ids: Sequence[str]) -> list[Any]:
        return list(pipeline.library.get(list(ids)))

    ranked_of: dict[int, Ranked] = {}
    for n, group in enumerate(groups, start=1):
        first = next(c for c in citations if c.group == group)
        ranked_of[group] = rank_context(pipeline, first.slot, vectors, draft=draft)
        if progress:
            progress(n, len(groups))
    contexts = Contexts.of([ranked_of[g] for g in groups])
    cited_in: dict[str, list[int]] = {}
    for c in citations:
        cited_in.setdefault(c.key, []).append(c.group)
    docs_in = {g: [doc_of[c.key] for c in citations if c.group == g and c.key in doc_of] for g in groups}
    uncited = frozenset(doc_of.values()) - {doc_of[c.key] for c in citations if c.key in doc_of}
    for n, group in enumerate(groups):
        cites = [c for c in citations if c.group == group]
        ranked = ranked_of[group]
        nearby = [d for g in groups[max(0, n - NEARBY):n] + groups[n + 1:n + 1 + NEARBY] for d in docs_in[g]]
        for c in cites:
            doc = doc_of.get(c.key)
            # the papers cited with it (same command, or another command of the same sentence) do not compete
            together = [d for g in groups if ranked_of[g].slot.sentence == ranked.slot.sentence for d in docs_in[g]]
            exclude = frozenset(d for d in [*(doc_of[k] for k in c.others if k in doc_of), *together] if d != doc)
            elsewhere = [ranked_of[g].vector for g in dict.fromkeys(cited_in[c.key])
                         if ranked_of[g].slot.sentence != ranked.slot.sentence]  # other sentences only
            p, rank, reason, better = judge(ranked, doc, exclude, model, keys_of=keys_of, key=c.key,
                                            elsewhere=elsewhere, vectors=vectors, contexts=contexts, nearby=nearby,
                                            uncited=uncited)
            verdict = WRONG if doc is None else model.verdict(p)
            file, line = where(c.start) if where else ("", 0)
            paper = papers.get(doc) if doc else None
            cited_here = {doc_of[k] for k in c.others if k in doc_of} | set(together)
            named = name_verdict(c.slot.focus or c.slot.sentence, paper, ranked.candidates, owners, cited_here)
            if named is not None:
                # a cousin of a named work is judged as the fill judges it (select/named.py); the number shown says
                # so too: at most the chance the named paper is not the right one, in the band of the word
                p = min(p, overruled_probability(model))
                verdict, reason = model.verdict(p), f"{named[0]}; {reason}"
                better = named_alternatives(named[1], doc, papers_of, keys_of, better)
            out.append(CheckedCitation(
                index=index[id(c)], key=c.key, file=file, line=line, command=c.command,
                sentence=c.slot.sentence, verdict=verdict, probability=round(p, 4), rank=rank, ranked=ranked.size,
                title=paper.title if paper else "", reason=reason,
                alternatives=better if verdict != FITS or better else (),
                focus=c.slot.focus or c.slot.sentence, position=cites.index(c) + 1, keys_in_command=len(cites),
            ))
    out.sort(key=lambda r: r.index)
    log.info("checked %d citations in %d cite commands in %.1f s", len(out), len(groups), time.perf_counter() - t0)
    return out


__all__ = ["DOUBTFUL", "FITS", "WRONG", "Alternative", "CheckedCitation", "check_citations", "judge"]
