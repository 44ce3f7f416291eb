"""The optional "rewrite" agent: an LLM turns a slot's context into search queries.

It asks for three short queries (key terms, the claim attributed to the cited work, its method or
data set) and puts them in :attr:`Query.variants`; the retrievers search each variant and fusion
merges them with the cleaned context. Runs only when ``llm_rewrite`` is on and an LLM is set;
a failed call leaves the query as it was and says why in the trace.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from citefinder.llm.lm import call_records, call_totals, describe_failure, make_lm
from citefinder.types import Query, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings

log = logging.getLogger(__name__)

MAX_VARIANTS = 3
MAX_VARIANT_CHARS = 300
FIELDS = ("keyword_query", "claim_query", "method_query")


def clean_variants(raw: list[str], query_text: str) -> tuple[str, ...]:
    """Non-empty, single-line, deduplicated (case-insensitively, and against the query) variants."""
    from citefinder.retrieve.query.reformulate import clean_context

    seen = {query_text.strip().lower()}
    out: list[str] = []
    for text in raw:
        text = clean_context(" ".join(str(text or "").split()))[:MAX_VARIANT_CHARS].strip()
        if text and text.lower() not in seen:
            seen.add(text.lower())
            out.append(text)
    return tuple(out[:MAX_VARIANTS])


class Rewriter(Protocol):
    """What the pipeline calls to rewrite a slot's query (LLMRewriter, or BreakerRewriter around it)."""

    agent: str

    def rewrite(self, query: Query, context: str) -> tuple[Query, StageTrace]: ...


class LLMRewriter:
    """Rewrite a slot context into keyword/claim/method queries with DSPy (``lm`` overrides the settings' LM)."""

    agent = "rewrite"

    def __init__(self, settings: "Settings", *, lm: Any = None) -> None:
        self.settings = settings
        self._lm = lm
        self._program: Any = None
        self._lock = threading.Lock()

    def _build(self) -> tuple[Any, Any]:
        with self._lock:
            if self._program is None:
                import dspy

                from citefinder.llm.signatures import RewriteQueries

                if self._lm is None:
                    self._lm = make_lm(self.settings)
                self._program = dspy.Predict(RewriteQueries)
            return self._lm, self._program

    def rewrite(self, query: Query, context: str) -> tuple[Query, StageTrace]:
        """The query with LLM variants added, and the "rewrite" trace."""
        start = time.perf_counter()
        details: dict[str, Any] = {}
        params = {"model": self.settings.llm_model, "max_variants": MAX_VARIANTS}

        def trace(status: str, message: str, new: Query) -> StageTrace:
            details["variants"] = list(new.variants)
            return StageTrace(
                agent=self.agent,
                status=status,  # type: ignore[arg-type]
                message=message,
                inputs={"context": context, "query": query.text},
                params=params,
                elapsed_s=time.perf_counter() - start,
                details=details,
            )

        call_lm = None
        try:
            import dspy

            lm, program = self._build()
            call_lm = lm.copy() if hasattr(lm, "copy") else lm
            with dspy.context(lm=call_lm):
                prediction = program(citation_context=context)
        except Exception as e:  # noqa: BLE001 - optional stage: keep the reformulated query
            log.warning("LLM query rewrite failed: %s", e)
            self._record_calls(details, call_lm)
            reason = describe_failure(e, self.settings)
            details["llm_error"] = reason  # counted by select/breaker.py
            return query, trace("fallback", f"{reason}; searching with the cleaned context only", query)
        self._record_calls(details, call_lm)
        raw = [str(getattr(prediction, name, "") or "") for name in FIELDS]
        details["raw"] = dict(zip(FIELDS, raw, strict=True))
        variants = clean_variants(raw, query.text)
        new = replace(query, variants=tuple(query.variants) + variants)
        if not variants:
            return new, trace("fallback", "the LLM wrote no usable query; searching with the cleaned context only", new)
        return new, trace("ok", f"{len(variants)} LLM quer{'y' if len(variants) == 1 else 'ies'} added", new)

    @staticmethod
    def _record_calls(details: dict[str, Any], lm: Any) -> None:
        records = call_records(list(getattr(lm, "history", None) or []))
        details["calls"] = records
        details.update(call_totals(records))


def skipped_rewrite(reason: str) -> StageTrace:
    """The "rewrite" trace when ``llm_rewrite`` is on but cannot run (no LLM configured)."""
    return StageTrace(agent=LLMRewriter.agent, status="skipped", message=f"skipped: {reason}")
