"""The selector protocol and the factory that picks one from the settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from citefinder.types import Candidate, Query, Selection, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings


class Selector(Protocol):
    """Decide which candidate (if any) a citation slot cites; agent name "select".

    ``confidences`` maps doc_id to a calibrated confidence in [0, 1] (:mod:`citefinder.rank.calibration`:
    how often a candidate ranked like this one by BM25 and dense was right); ``context`` is the
    text shown to an LLM (defaults to the query).
    The selected paper is always one of ``candidates``.
    """

    def select(self, query: Query, candidates: Sequence[Candidate], confidences: Mapping[str, float], *,
               context: str | None = None) -> tuple[Selection, StageTrace]: ...


def make_selector(settings: "Settings") -> Selector:
    """An :class:`LLMSelector` (falling back to the threshold rule) when ``llm_model`` is set, else the rule."""
    from citefinder.select.fallback import ThresholdSelector

    threshold = ThresholdSelector(settings.confidence_threshold)
    if settings.llm_model:
        from citefinder.select.llm import LLMSelector

        return LLMSelector(settings, fallback=threshold)
    return threshold
