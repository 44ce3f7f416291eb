"""The LLM selector: a DSPy ChainOfThought over :class:`CitationRetrieval`, mapped back to a candidate.

The LM is passed with ``dspy.context(lm=...)`` on every call, never ``dspy.configure`` (which only
the first thread may call: a second Streamlit session would break). Answers that cannot be mapped
to a candidate, and failed calls, fall back to the threshold selector and say so in the trace.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citefinder.select.fallback import ThresholdSelector, selection_hits
from citefinder.types import Candidate, Query, Selection, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings

log = logging.getLogger(__name__)

FUZZY_MIN_RATIO = 0.9
_NONE_ANSWERS = frozenset({"none", "no", "null", "nothing", "n a", "not found", "no match", "none found"})
_NUMBER = re.compile(r"^(?:candidate|paper|number|no\.?|#)?\s*\[?\s*(\d+)\s*\]?(?=\W|$)", re.IGNORECASE)


def normalize_title(title: str) -> str:
    """Lower case, letters and digits only, single spaces."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", title.lower()).split())


@dataclass(frozen=True)
class Answer:
    """How an LLM answer maps onto the candidate list."""

    kind: str  # "pick", "none" or "bad"
    index: int = -1  # 0-based, for "pick"
    how: str = ""  # "number", "title", "fuzzy title" for "pick"; the reason for "bad"


def interpret(raw: str, candidates: Sequence[Candidate]) -> Answer:
    """Map an answer to a candidate: number, exact normalised title, fuzzy title, or none.

    Never returns a paper outside ``candidates``: anything unmatched is "bad".
    """
    text = raw.strip().strip("\"'`*").strip()
    norm = normalize_title(text)
    if not norm:
        return Answer("bad", how="empty answer")
    if norm in _NONE_ANSWERS or norm.startswith("none of"):
        return Answer("none")
    number = _NUMBER.match(text)
    if number and 1 <= int(number.group(1)) <= len(candidates):
        return Answer("pick", int(number.group(1)) - 1, "number")
    titles = [normalize_title(c.paper.title) for c in candidates]
    if norm in titles:
        return Answer("pick", titles.index(norm), "title")
    ratios = [difflib.SequenceMatcher(None, norm, t).ratio() for t in titles]
    if ratios and max(ratios) >= FUZZY_MIN_RATIO:
        return Answer("pick", ratios.index(max(ratios)), f"fuzzy title (ratio {max(ratios):.2f})")
    if number:
        return Answer("bad", how=f"candidate number {number.group(1)} is out of range 1-{len(candidates)}")
    return Answer("bad", how=f"answer {raw.strip()[:120]!r} matches no candidate number or title")


def _clamp(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(x) else min(1.0, max(0.0, x))


def _usage(prediction: Any) -> dict[str, int]:
    """Prompt and completion tokens when the LM reported usage (DSPy's usage tracker)."""
    get = getattr(prediction, "get_lm_usage", None)
    per_lm = (get() if get else None) or {}
    totals: dict[str, int] = {}
    for usage in per_lm.values():
        for key in ("prompt_tokens", "completion_tokens"):
            if isinstance(usage.get(key), int):
                totals[key] = totals.get(key, 0) + usage[key]
    return totals


def _client_kwargs(settings: "Settings") -> dict[str, str]:
    """api_base/api_key for dspy.LM, leaving out what is unset.

    An explicit ``api_key=None`` makes DSPy refuse the call ("empty credential"); a local
    OpenAI-compatible server (llama.cpp, vLLM) without a key gets a placeholder, which it ignores.
    """
    kwargs: dict[str, str] = {}
    if settings.llm_api_base:
        kwargs["api_base"] = settings.llm_api_base
    if settings.llm_api_key is not None and settings.llm_api_key.get_secret_value():
        kwargs["api_key"] = settings.llm_api_key.get_secret_value()
    elif settings.llm_api_base:
        kwargs["api_key"] = "no-key"
    return kwargs


class LLMSelector:
    """Ask an LLM which numbered candidate is cited; fall back to ``fallback`` when unusable.

    ``lm`` overrides the LM built from the settings (tests pass ``dspy.utils.dummies.DummyLM``).
    """

    method = "llm"

    def __init__(self, settings: "Settings", *, lm: Any = None, fallback: ThresholdSelector | None = None) -> None:
        self.settings = settings
        self.fallback = fallback or ThresholdSelector(settings.confidence_threshold)
        self._lm = lm
        self._program: Any = None
        self._lock = threading.Lock()

    def _build(self) -> tuple[Any, Any]:
        with self._lock:
            if self._program is None:
                import dspy

                from citefinder.select.signature import CitationRetrieval

                if self._lm is None:
                    self._lm = dspy.LM(
                        self.settings.llm_model,
                        max_tokens=self.settings.llm_max_tokens,
                        timeout=self.settings.llm_timeout_s,
                        num_retries=self.settings.llm_retries,
                        temperature=self.settings.llm_temperature,
                        cache=False,
                        **_client_kwargs(self.settings),
                    )
                self._program = dspy.ChainOfThought(CitationRetrieval)
            return self._lm, self._program

    def _ask(self, context: str, shown: Sequence[Candidate]) -> Any:
        import dspy

        from citefinder.select.signature import format_candidates

        lm, program = self._build()
        with dspy.context(lm=lm, track_usage=True):
            return program(citation_context=context, candidates=format_candidates(shown, self.settings.abstract_chars))

    def select(
        self,
        query: Query,
        candidates: Sequence[Candidate],
        confidences: Mapping[str, float],
        *,
        context: str | None = None,
    ) -> tuple[Selection, StageTrace]:
        start = time.perf_counter()
        shown = list(candidates[: self.settings.select_candidates])
        context = context if context is not None else query.text
        params = {"method": self.method, "model": self.settings.llm_model, "candidates": len(shown)}
        details: dict[str, Any] = {}

        def trace(status: str, message: str) -> StageTrace:
            return StageTrace(
                agent="select",
                status=status,
                message=message,  # type: ignore[arg-type]
                inputs={"context": context, "candidates": len(shown)},
                params=params,
                top=selection_hits(shown, confidences),
                elapsed_s=time.perf_counter() - start,
                details=details,
            )

        def fall_back(reason: str) -> tuple[Selection, StageTrace]:
            selection, why = self.fallback.decide(shown, confidences)
            details["selected"] = selection.paper.doc_id if selection.paper else None
            return selection, trace("fallback", f"{reason}; fell back to the threshold rule: {why}")

        if not shown:
            return Selection("not_found", method=self.method), trace("ok", "no candidates: not found")
        try:
            prediction = self._ask(context, shown)
        except Exception as e:  # noqa: BLE001 - optional stage: degrade to the threshold rule
            log.warning("LLM selector failed: %s", e)
            return fall_back(f"LLM call failed: {type(e).__name__}: {e}")

        raw = str(getattr(prediction, "selected", "") or "")
        reasoning = str(getattr(prediction, "reasoning", "") or "")
        details.update({"raw_answer": raw, "reasoning": reasoning, **_usage(prediction)})
        conf = _clamp(getattr(prediction, "confidence", 0.0))
        answer = interpret(raw, shown)
        if answer.kind == "pick":
            chosen = shown[answer.index]
            details["selected"] = chosen.doc_id
            selection = Selection("found", chosen.paper, conf, self.method, reasoning)
            return selection, trace("ok", f"LLM selected [{answer.index + 1}] by {answer.how} (confidence {conf:.2f})")
        if answer.kind == "none":
            details["selected"] = None
            return Selection("not_found", None, conf, self.method, reasoning), trace(
                "ok", "LLM answered none of the candidates: not found"
            )
        return fall_back(f"unusable LLM answer: {answer.how}")
