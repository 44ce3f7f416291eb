"""A circuit breaker for the LLM during one fill: after two failed calls the LLM is not asked again.

A dead endpoint otherwise costs its timeout and retries on every slot (30 slots took 93 s). The
breaker wraps the selector and the query rewriter of one :meth:`Pipeline.cite_text` call; once
open, slots go straight to the threshold rule (selector) or keep the cleaned query (rewriter), and
their traces say so with ``details["llm_skipped"] = True``. A failed call is one whose trace holds
``details["llm_error"]`` (set by :class:`LLMSelector` and :class:`LLMRewriter`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from citefinder.select.fallback import ThresholdSelector, selection_hits
from citefinder.types import Candidate, Query, Selection, StageTrace

log = logging.getLogger(__name__)

MAX_FAILURES = 2


class LLMBreaker:
    """Counts failed LLM calls (thread-safe); open after ``max_failures``."""

    def __init__(self, max_failures: int = MAX_FAILURES) -> None:
        self.max_failures = max_failures
        self._failures: list[str] = []
        self._lock = threading.Lock()

    def record(self, trace: StageTrace) -> None:
        error = trace.details.get("llm_error")
        if not error:
            return
        with self._lock:
            self._failures.append(str(error))
            if len(self._failures) == self.max_failures:
                log.warning("LLM failed %d times in this fill; not calling it again: %s", self.max_failures, error)

    @property
    def open(self) -> bool:
        with self._lock:
            return len(self._failures) >= self.max_failures

    @property
    def reason(self) -> str:
        with self._lock:
            return self._failures[-1] if self._failures else ""

    def skip_message(self) -> str:
        return f"LLM not asked: it failed {self.max_failures} times in this fill (last: {self.reason})"


class BreakerSelector:
    """The LLM selector until the breaker opens, then the threshold rule without calling the LLM."""

    def __init__(self, inner: Any, fallback: ThresholdSelector, breaker: LLMBreaker) -> None:
        self.inner = inner
        self.fallback = fallback
        self.breaker = breaker
        self.method = getattr(inner, "method", "llm")

    def select(self, query: Query, candidates: Sequence[Candidate], confidences: Mapping[str, float], *,
               context: str | None = None) -> tuple[Selection, StageTrace]:
        if not self.breaker.open:
            selection, trace = self.inner.select(query, candidates, confidences, context=context)
            self.breaker.record(trace)
            return selection, trace
        start = time.perf_counter()
        shown = list(candidates)
        selection, why = self.fallback.decide(shown, confidences)
        trace = StageTrace(
            agent="select",
            status="fallback",
            message=f"{self.breaker.skip_message()}; threshold rule: {why}",
            inputs={"context": context or query.text, "candidates": len(shown)},
            params={"method": self.method, "threshold": self.fallback.threshold},
            top=selection_hits(shown, confidences),
            elapsed_s=time.perf_counter() - start,
            details={"llm_skipped": True, "llm_failure": self.breaker.reason,
                     "selected": selection.paper.doc_id if selection.paper else None},
        )
        return selection, trace


class BreakerRewriter:
    """The LLM query rewriter until the breaker opens, then the query unchanged."""

    agent = "rewrite"

    def __init__(self, inner: Any, breaker: LLMBreaker) -> None:
        self.inner = inner
        self.breaker = breaker

    def rewrite(self, query: Query, context: str) -> tuple[Query, StageTrace]:
        if not self.breaker.open:
            query, trace = self.inner.rewrite(query, context)
            self.breaker.record(trace)
            return query, trace
        return query, StageTrace(
            agent=self.agent, status="skipped", message=f"skipped: {self.breaker.skip_message()}",
            details={"llm_skipped": True, "llm_failure": self.breaker.reason},
        )
