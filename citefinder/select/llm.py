"""The LLM selector: a DSPy ChainOfThought over :class:`CitationRetrieval`, mapped back to a candidate.

The LM is passed with ``dspy.context(lm=...)`` on every call, never ``dspy.configure`` (which only
the first thread may call: a second Streamlit session would break). The picker is the newest
program compiled by ``citefinder optimize`` for the library when there is one (setting
``llm_program``), else the plain prompt. Answers that cannot be mapped to a candidate, and failed
calls, fall back to the threshold selector and say so in the trace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.library.identity import normalize_title
from citefinder.llm.lm import call_records, call_totals, describe_failure, import_dspy, make_lm
from citefinder.select.answer import Answer, interpret, interpret_titles, parse_confidence
from citefinder.select.fallback import ThresholdSelector, selection_hits
from citefinder.select.programs import resolve_program
from citefinder.types import Candidate, Query, Selection, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings

__all__ = ["Answer", "LLMSelector", "interpret", "interpret_titles", "load_picker", "normalize_title"]

log = logging.getLogger(__name__)


def load_picker(path: str | Path | None) -> Any:
    """A fresh picker module, with the compiled demos and instructions of ``path`` when given.

    Any LM saved with the program is dropped: the LM comes from the settings at call time.
    """
    dspy = import_dspy()

    from citefinder.llm.signatures import CitationRetrieval

    program = dspy.ChainOfThought(CitationRetrieval)
    if path is not None:
        program.load(str(path))
        program.set_lm(None)
    return program


class LLMSelector:
    """Ask an LLM which numbered candidate is cited; fall back to ``fallback`` when unusable.

    ``lm`` overrides the LM built from the settings (tests pass ``dspy.utils.dummies.DummyLM``);
    ``program`` overrides the picker module (default: :func:`load_picker` of ``llm_program``).
    """

    method = "llm"

    def __init__(
        self,
        settings: "Settings",
        *,
        lm: Any = None,
        fallback: ThresholdSelector | None = None,
        program: Any = None,
    ) -> None:
        self.settings = settings
        self.fallback = fallback or ThresholdSelector(settings.confidence_threshold)
        self._lm = lm
        self._program = program
        self.program_name: str | None = None  # file name of the compiled program in use
        self.program_error: str | None = None  # why the configured program could not be used
        self._lock = threading.Lock()

    def _build(self) -> tuple[Any, Any]:
        with self._lock:
            if self._lm is None:
                self._lm = make_lm(self.settings)
            if self._program is None:
                self._program = self._load_program()
            return self._lm, self._program

    def _load_program(self) -> Any:
        """The configured compiled program; the plain prompt (and the reason) when it cannot be loaded."""
        try:
            path = resolve_program(self.settings.llm_program, self.settings.library)
            program = load_picker(path)
        except Exception as e:  # noqa: BLE001 - a broken program file must not stop citing
            log.warning("cannot load the picker program (llm_program=%r): %s", self.settings.llm_program, e)
            self.program_error = f"{type(e).__name__}: {e}"
            return load_picker(None)
        self.program_name = path.name if path is not None else None
        if path is not None:
            log.info("LLM selector uses the compiled program %s", path)
        return program

    def _ask(self, lm: Any, program: Any, context: str, candidates_text: str) -> Any:
        import dspy

        with dspy.context(lm=lm, track_usage=True):
            return program(citation_context=context, candidates=candidates_text)

    def select(self, query: Query, candidates: Sequence[Candidate], confidences: Mapping[str, float], *,
               context: str | None = None) -> tuple[Selection, StageTrace]:
        start = time.perf_counter()
        shown = list(candidates[: self.settings.select_candidates])
        context = context if context is not None else query.text
        params = {
            "method": self.method,
            "model": self.settings.llm_model,
            "candidates": len(shown),
            "abstract_chars": self.settings.abstract_chars,
            "max_tokens": self.settings.llm_max_tokens,
            "timeout_s": self.settings.llm_timeout_s,
            "retries": self.settings.llm_retries,
        }
        details: dict[str, Any] = {}

        def trace(status: str, message: str) -> StageTrace:
            return StageTrace(
                agent="select",
                status=status,  # type: ignore[arg-type]
                message=message,
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
            lm, program = self._build()
        except Exception as e:  # noqa: BLE001 - optional stage: degrade to the threshold rule
            log.warning("LLM selector unavailable: %s", e)
            details["llm_error"] = f"LLM unavailable: {type(e).__name__}: {e}"  # counted by select/breaker.py
            return fall_back(details["llm_error"])
        from citefinder.llm.signatures import format_candidates  # imports dspy: after _build said it is there

        candidates_text = format_candidates(shown, self.settings.abstract_chars)
        details.update({"program": self.program_name, "candidates_chars": len(candidates_text)})
        if self.program_error:
            details["program_error"] = self.program_error
        call_lm = lm.copy() if hasattr(lm, "copy") else lm  # its own history: this slot's calls only
        try:
            prediction = self._ask(call_lm, program, context, candidates_text)
        except Exception as e:  # noqa: BLE001 - optional stage: degrade to the threshold rule
            log.warning("LLM selector failed: %s", e)
            self._record_calls(details, call_lm)
            details["llm_error"] = describe_failure(e, self.settings)  # counted by select/breaker.py
            return fall_back(details["llm_error"])
        self._record_calls(details, call_lm)

        raw = str(getattr(prediction, "selected", "") or "")
        reasoning = str(getattr(prediction, "reasoning", "") or "")
        conf = parse_confidence(getattr(prediction, "confidence", None))
        details.update({"raw_answer": raw, "reasoning": reasoning, "confidence": conf})
        answer = interpret(raw, shown)
        if answer.kind == "pick":
            chosen = shown[answer.index]
            details["selected"] = chosen.doc_id
            details["pick"] = {
                "number": answer.index + 1,
                "doc_id": chosen.doc_id,
                "title": chosen.paper.title,
                "how": answer.how,
            }
            selection = Selection("found", chosen.paper, conf, self.method, reasoning)
            return selection, trace("ok", f"LLM selected [{answer.index + 1}] by {answer.how} (confidence {conf:.2f})")
        if answer.kind == "none":
            details["selected"] = None
            return Selection("not_found", None, conf, self.method, reasoning), trace(
                "ok", "LLM answered none of the candidates: not found"
            )
        return fall_back(f"unusable LLM answer: {answer.how}")

    @staticmethod
    def _record_calls(details: dict[str, Any], lm: Any) -> None:
        """Per-call prompt size and tokens (when the server reported usage), and their totals."""
        records = call_records(list(getattr(lm, "history", None) or []))
        details["calls"] = records
        details.update(call_totals(records))
