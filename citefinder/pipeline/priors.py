"""The literature's order tilted by the user's library: the priors (tuned on training slots,
``citefinder/data/literature.json``) and what they read of the user's papers (:class:`OwnPapers`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citefinder.library.identity import Identity, dedupe_keys, identity, same_work
from citefinder.types import Paper


@dataclass(frozen=True)
class Priors:
    """How the user's library tilts the literature's order (tuned on training slots only:
    ``citefinder/data/literature.json``). A paper's score is ``1 / (rank + k)`` (its rank in the literature's
    fused order) times ``1 + authors * shared`` (``shared``: its authors' surnames the user's papers also have,
    at most 3) times ``1 + topic * t`` (``t`` in 0..1: how well its title matches the user's closest paper by
    BM25, against the best of the slot's candidates) times ``newer`` when it is more than ``slack`` years newer
    than the user's newest paper (once the user has :data:`NEWEST_NEEDS` dated papers) times ``1 + cited * c``
    (``c`` in 0..1: how often the literature cites it, ``log(1 + n)`` against the most cited of the slot's
    candidates or ``log(1 + saturate)``, whichever is larger: a landmark paper first among near-equals). The
    defaults leave the literature's own order."""

    k: float = 1.0
    authors: float = 0.0
    topic: float = 0.0
    newer: float = 1.0
    slack: int = 1
    cited: float = 0.0
    saturate: float = 0.0
    provenance: str = ""

    @classmethod
    def shipped(cls) -> "Priors":
        import json
        from importlib import resources

        data = json.loads(resources.files("citefinder.data").joinpath("literature.json").read_text(encoding="utf-8"))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (data.get("priors") or {}).items() if k in known})

    @property
    def neutral(self) -> bool:
        return not self.authors and not self.topic and self.newer == 1.0 and not self.cited


def prior_order(candidates: Sequence[Any], feats: Sequence[Mapping[str, float]],
                priors: Priors) -> list[int]:
    """The candidates' indexes in the order the priors give them (ties: the literature's own order)."""
    best_topic = max((f["topic"] for f in feats), default=0.0) or 1.0
    best_cited = math.log1p(max([f.get("cited", 0.0) for f in feats] + [priors.saturate])) or 1.0

    def score(i: int) -> float:
        f = feats[i]
        value = 1.0 / (i + 1 + priors.k) * (1 + priors.authors * f["shared"])
        value *= 1 + priors.topic * f["topic"] / best_topic
        value *= 1 + priors.cited * math.log1p(f.get("cited", 0.0)) / best_cited
        return value * (priors.newer if f["newer"] > priors.slack else 1.0)

    return sorted(range(len(candidates)), key=lambda i: (-score(i), i))


NEWEST_NEEDS = 10  # dated papers of the user's before "newer than all of yours" counts (see OwnPapers)


class OwnPapers:
    """The user's papers by identity (a literature paper that is one of them is not offered as new), and what
    the priors read of them: their authors' surnames, the newest year, their BM25 index."""

    def __init__(self, papers: Sequence[Paper], library: Any = None, *, also: Sequence[Paper] = ()) -> None:
        from citefinder.library.identity import surname

        self.ids = {p.doc_id for p in papers}
        self.keys: dict[str, list[Identity]] = {}
        for p in [*papers, *also]:  # ``also``: a paired .bib's entries, the user's too (never offered as new)
            for k in dedupe_keys(p):
                self.keys.setdefault(k, []).append(identity(p))
        self.ids |= {p.doc_id for p in also}
        # the years of the user's papers: where the draft's other citations sit (the offers' evidence)
        self.years = tuple(sorted(p.year for p in papers if p.year))
        self.surnames = {surname(a) for p in papers for a in p.authors} - {""}
        years = [p.year for p in papers if p.year]
        # the newest year says how recent the draft is only in a library of some size: a new user's few papers
        # do not (drafts-dev's libraries, where the prior was tuned, hold 34 to hundreds of dated entries)
        self.newest = max(years) if len(years) >= NEWEST_NEEDS else None
        self.library = library

    def features(self, paper: Paper) -> dict[str, float]:
        """What the priors read of a literature paper (see :class:`Priors`)."""
        from citefinder.library.identity import surname

        shared = min(3, sum(1 for a in paper.authors if surname(a) in self.surnames))
        newer = (paper.year - self.newest) if paper.year and self.newest else 0
        topic = 0.0
        if self.library is not None and paper.title:
            hits = [h for h in self.library.bm25_search(paper.title, 5) if h.doc_id in self.ids]
            topic = hits[0].score if hits else 0.0
        return {"shared": float(shared), "newer": float(newer), "topic": float(topic)}

    def holds(self, paper: Paper) -> bool:
        if paper.doc_id in self.ids:
            return True
        who = identity(paper)
        return any(same_work(k, i, who) for k in dedupe_keys(paper) for i in self.keys.get(k, ()))
