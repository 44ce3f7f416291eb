"""Filling many slots: bounded concurrency when an LLM is asked, and one LLM circuit breaker per fill.

The retrieval stages are fast and CPU-bound; an LLM call waits on the network. With an LLM
(selector or rewriter) the slots run ``llm_concurrency`` at a time, so a 30-slot draft against an
endpoint answering in 1 s takes seconds; without one they run one after another (two cores gain
nothing from threads). Results come back in slot order; ``progress(done, total, result)`` is called
in the calling thread as each slot finishes (in completion order, not slot order).
"""

from __future__ import annotations

import concurrent.futures
import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from citefinder.retrieve.query.cocite import merge, picks_near, seeds_for
from citefinder.select.breaker import BreakerRewriter, BreakerSelector, LLMBreaker
from citefinder.select.fallback import ThresholdSelector
from citefinder.select.hubs import hold_back
from citefinder.types import Slot, SlotResult

if TYPE_CHECKING:
    from citefinder.config import Settings

log = logging.getLogger(__name__)

Progress = Callable[[int, int, "SlotResult | None"], None]


class SlotCiter(Protocol):
    """What filling needs of a pipeline (:class:`citefinder.pipeline.pipeline.Pipeline`): its settings,
    its LLM agents (to put a breaker in front of them) and one slot's citation."""

    settings: "Settings"
    selector: Any
    rewriter: Any

    def cite_slot(self, slot: Slot, *, draft: str = "", cocited: Sequence[str] = ()) -> SlotResult: ...


def uses_llm(pipeline: SlotCiter) -> bool:
    """True when filling a slot may call an LLM (selector or rewriter)."""
    return getattr(pipeline.selector, "method", "") == "llm" or pipeline.rewriter is not None


def with_breaker(pipeline: SlotCiter, breaker: LLMBreaker) -> SlotCiter:
    """A shallow copy of ``pipeline`` whose LLM agents go through ``breaker`` (the original is untouched)."""
    fill = copy.copy(pipeline)
    if getattr(pipeline.selector, "method", "") == "llm":
        fallback = getattr(pipeline.selector, "fallback", None) or ThresholdSelector(
            pipeline.settings.confidence_threshold
        )
        fill.selector = BreakerSelector(pipeline.selector, fallback, breaker)
    if pipeline.rewriter is not None:
        fill.rewriter = BreakerRewriter(pipeline.rewriter, breaker)
    return fill


def cite_slots(
    pipeline: SlotCiter,
    slots: Sequence[Slot],
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    draft: str = "",
    seeds: Mapping[int, tuple[str, ...]] | None = None,
) -> list[SlotResult]:
    """Cite every slot (see the module doc; ``draft`` is the draft's own context for agent "draft");
    raises the first slot's CitefinderError, if any.

    ``seeds``: per slot index, the library papers the draft already cites near it (agent "co-cited");
    one after another, the confident picks of the slots before it (within ``cocited_chars``) join them."""
    total = len(slots)
    llm = uses_llm(pipeline)
    fill = with_breaker(pipeline, LLMBreaker()) if llm else pipeline
    n = workers if workers is not None else (pipeline.settings.llm_concurrency if llm else 1)
    n = max(1, min(int(n), total or 1))
    if progress:
        progress(0, total, None)
    if n == 1:
        results: list[SlotResult] = []
        s = pipeline.settings
        for slot in slots:
            near = merge(seeds_for(slot, seeds), picks_near(slot, results, s.cocited_chars, s.confidence_threshold))
            # a paper auto-filled for unrelated sentences is held back (select/hubs.py)
            results.append(hold_back(fill.cite_slot(slot, draft=draft, cocited=near), results, s.confidence_threshold))
            if progress:
                progress(len(results), total, results[-1])
        return results
    done: dict[int, SlotResult] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=n, thread_name_prefix="cite-slot") as pool:
        futures = {pool.submit(fill.cite_slot, slot, draft=draft, cocited=seeds_for(slot, seeds)): slot.index
                   for slot in slots}
        try:
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                done[futures[future]] = result
                if progress:
                    progress(len(done), total, result)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [done[slot.index] for slot in slots]
