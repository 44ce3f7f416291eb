"""The threshold selector: the top candidate when its confidence clears the threshold.

Used when no LLM is configured, and by the LLM selector when its answer cannot be used.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from citefinder.types import Candidate, Hit, Query, Selection, StageTrace


class ThresholdSelector:
    """Select the top candidate when ``confidence >= threshold``, else answer not found."""

    method = "threshold"

    def __init__(self, threshold: float = 0.3) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"confidence_threshold must be in [0, 1], got {threshold}")
        self.threshold = threshold

    def decide(self, candidates: Sequence[Candidate], confidences: Mapping[str, float]) -> tuple[Selection, str]:
        """The selection and a sentence saying why (without who asked)."""
        if not candidates:
            return Selection("not_found", method=self.method), "no candidates: not found"
        top = candidates[0]
        ranked_by = "reranked" if top.stage("rerank") is not None else "fused"
        conf = float(confidences.get(top.doc_id, 0.0))
        if conf >= self.threshold:
            why = f"selected the top {ranked_by} candidate (confidence {conf:.2f} >= {self.threshold:.2f})"
            return Selection("found", top.paper, conf, self.method, why), why
        why = (
            f"the top {ranked_by} candidate's confidence {conf:.2f} is below threshold {self.threshold:.2f}: not found"
        )
        return Selection("not_found", None, conf, self.method, why), why

    def select(self, query: Query, candidates: Sequence[Candidate], confidences: Mapping[str, float], *,
               context: str | None = None) -> tuple[Selection, StageTrace]:
        start = time.perf_counter()
        selection, why = self.decide(candidates, confidences)
        trace = StageTrace(
            agent="select",
            status="ok",
            message=f"no LLM configured: {why}",
            inputs={"candidates": len(candidates)},
            params={"method": self.method, "threshold": self.threshold},
            top=selection_hits(candidates, confidences),
            elapsed_s=time.perf_counter() - start,
            details={"selected": selection.paper.doc_id if selection.paper else None},
        )
        return selection, trace


def selection_hits(candidates: Sequence[Candidate], confidences: Mapping[str, float]) -> tuple[Hit, ...]:
    """The candidates the selector saw, with their confidences, for the trace."""
    return tuple(Hit(c.doc_id, i + 1, float(confidences.get(c.doc_id, 0.0))) for i, c in enumerate(candidates))
