"""Calibrated confidence: how often a candidate is the right paper, given where each retriever ranked it.

Normalised RRF orders right and wrong top-1s well but is squeezed near 1.0, so no threshold on it
separates them (measured: a 0.5 threshold never abstained). What does separate them is agreement:
a paper both BM25 and the dense retriever put first is right far more often than one only one of
them likes. The confidence of a candidate is therefore the measured precision of its *agreement
bucket* — the fraction of fused top-1s in that bucket that were a gold paper on the calibration
set (autoscholar-dev + the CiteME ``train`` split over the 50k benchmark library; CiteME ``test``
was never used). ``bench/ablate.py buckets`` recomputes the table from saved eval results.

The buckets are fixed in advance (not searched), so the table has eight numbers, each an honest
frequency with its count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citefinder.types import Candidate

RETRIEVERS = ("bm25", "dense")


@dataclass(frozen=True)
class Bucket:
    """One agreement pattern, its calibrated precision and the evidence behind it."""

    name: str
    describe: str  # for traces: "rank 1 for both BM25 and dense"
    precision: float
    correct: int
    total: int


# Measured with `bench/ablate.py buckets` (see bench/RESULTS.md, "Confidence of the no-LLM selector").
DEFAULT_BUCKETS: tuple[Bucket, ...] = (
    Bucket("both_first", "rank 1 for both BM25 and dense", 0.391, 45, 115),
    Bucket("first_and_top3", "rank 1 for one retriever and 2-3 for the other", 0.177, 29, 164),
    Bucket("first_and_top10", "rank 1 for one retriever and 4-10 for the other", 0.140, 20, 143),
    Bucket("first_only", "rank 1 for one retriever only (below 10 or absent in the other)", 0.093, 7, 75),
    Bucket("both_top3", "rank 2-3 for both retrievers", 0.066, 5, 76),
    Bucket("other", "ranked lower by both retrievers", 0.027, 12, 438),
    Bucket("single_first", "rank 1 of the only retriever that ran", 0.137, 139, 1011),
    # Never a fused top-1 in calibration (it cannot be); the "other" rate stands in.
    Bucket("single_other", "below rank 1 of the only retriever that ran", 0.027, 0, 0),
)


def bucket_name(ranks: Mapping[str, int | None]) -> str:
    """The agreement bucket of a candidate from its 1-based rank in each retriever that ran (None: absent)."""
    if len(ranks) < 2:
        only = next(iter(ranks.values()), None)
        return "single_first" if only == 1 else "single_other"
    a, b = sorted((r if r is not None else 10**9) for r in list(ranks.values())[:2])
    if a == 1:
        if b == 1:
            return "both_first"
        if b <= 3:
            return "first_and_top3"
        if b <= 10:
            return "first_and_top10"
        return "first_only"
    if b <= 3:
        return "both_top3"
    return "other"


@dataclass(frozen=True)
class Calibration:
    """Agreement buckets -> calibrated precision; the confidence the no-LLM selector thresholds."""

    buckets: tuple[Bucket, ...] = DEFAULT_BUCKETS

    def bucket(self, name: str) -> Bucket:
        for b in self.buckets:
            if b.name == name:
                return b
        raise KeyError(name)

    def of(self, candidate: Candidate, retrievers: Sequence[str]) -> Bucket:
        """The bucket of ``candidate`` given the retrievers that returned a list for this query."""
        ranks: dict[str, int | None] = {}
        for name in retrievers:
            score = candidate.stage(name)
            ranks[name] = score.rank if score is not None else None
        return self.bucket(bucket_name(ranks))

    def confidences(self, candidates: Sequence[Candidate], retrievers: Sequence[str]) -> dict[str, float]:
        """doc_id -> calibrated confidence for every candidate."""
        return {c.doc_id: self.of(c, retrievers).precision for c in candidates}


DEFAULT_CALIBRATION = Calibration()
