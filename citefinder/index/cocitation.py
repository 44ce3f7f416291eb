"""Who cites the library's papers: per paper, the citing papers (and how often the memory cites it),
per citing paper the library papers it cites (read by the "co-cited" and "cited-often" agents).

Two papers cited by the same papers are related (co-citation, Small, JASIS 1973); the seed design
of CiteFinder ranked a slot's candidates by their co-citation with the draft's other citations near
it. How often the literature cites a paper is a prior: a well-known paper is cited more.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citefinder.index.memory import MemoryIndexKind
from citefinder.library.contexts.memory import memory_of

_FILE = "cocitation.json"


@dataclass(frozen=True)
class Cocitations:
    """``citers``: doc_id -> the citing papers that cite it; ``cites``: citing paper -> library papers it cites;
    ``counts``: doc_id -> records citing it."""

    citers: dict[str, frozenset[str]]
    cites: dict[str, frozenset[str]]
    counts: dict[str, int]

    def __len__(self) -> int:
        return len(self.counts)

    def related(self, seeds: list[str]) -> dict[str, float]:
        """doc_id -> Σ over seeds of the cosine of their citing-paper sets (seeds themselves left out)."""
        scores: dict[str, float] = defaultdict(float)
        for seed in dict.fromkeys(seeds):
            mine = self.citers.get(seed)
            if not mine:
                continue
            shared: dict[str, int] = defaultdict(int)
            for citing in mine:
                for doc in self.cites.get(citing, ()):
                    shared[doc] += 1
            for doc, n in shared.items():
                if doc not in seeds:
                    scores[doc] += n / (len(mine) * len(self.citers[doc])) ** 0.5
        return dict(scores)


class CocitationKind(MemoryIndexKind):
    """Derived index: citing-paper sets of the matched records."""

    name = "cocitation"
    version = 1

    def build(self, library: Any) -> Cocitations:
        citers: dict[str, set[str]] = defaultdict(set)
        cites: dict[str, set[str]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for row in memory_of(library).matched_rows():
            counts[row.doc_id] += 1
            if row.citing:  # a record that does not say who cites is no evidence of co-citation
                citers[row.doc_id].add(row.citing)
                cites[row.citing].add(row.doc_id)
        return Cocitations({d: frozenset(c) for d, c in citers.items()}, {c: frozenset(d) for c, d in cites.items()},
                           dict(counts))

    def save(self, index: Cocitations, folder: Path) -> None:
        (folder / _FILE).write_text(json.dumps({"citers": {d: sorted(c) for d, c in index.citers.items()},
                                                "counts": index.counts}))

    def load(self, folder: Path) -> Cocitations:
        raw = json.loads((folder / _FILE).read_text())
        citers = {d: frozenset(c) for d, c in raw["citers"].items()}
        cites: dict[str, set[str]] = defaultdict(set)
        for doc, citing in citers.items():
            for c in citing:
                cites[c].add(doc)
        counts = {d: int(n) for d, n in raw["counts"].items()}
        return Cocitations(citers, {c: frozenset(d) for c, d in cites.items()}, counts)


COCITATIONS = CocitationKind()
