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
from citefinder.select.sentences import auto_filled, clash, gave_way, gives_way, same_sentence
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

    def cite_slot(self, slot: Slot, *, draft: str = "", cocited: Sequence[str] = (),
                  exclude: Sequence[str] = (), draft_slots: int | None = None) -> SlotResult: ...


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
        excluded: dict[int, set[str]] = {}

        def cite(slot: Slot, done: list[SlotResult]) -> SlotResult:
            near = merge(seeds_for(slot, seeds), picks_near(slot, done, s.cocited_chars, s.confidence_threshold))
            without = tuple(sorted(excluded.get(slot.index, ())))
            return fill.cite_slot(slot, draft=draft, cocited=near, draft_slots=total,
                                  **({"exclude": without} if without else {}))

        for slot in slots:
            result = _apart(cite(slot, results), results, excluded, cite, s.confidence_threshold)
            # a paper auto-filled for unrelated sentences is held back (select/hubs.py)
            results.append(hold_back(result, results, s.confidence_threshold))
            if progress:
                progress(len(results), total, results[-1])
        return results
    done: dict[int, SlotResult] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=n, thread_name_prefix="cite-slot") as pool:
        futures = {pool.submit(fill.cite_slot, slot, draft=draft, cocited=seeds_for(slot, seeds), draft_slots=total):
                   slot.index for slot in slots}
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


def _apart(result: SlotResult, results: list[SlotResult], excluded: dict[int, set[str]],
           cite: Callable[[Slot, list[SlotResult]], SlotResult], threshold: float) -> SlotResult:
    """``result`` once no two markers of its sentence are auto-filled with one paper (select/sentences.py): of
    two, the less confident is cited again without it (an earlier one in place in ``results``)."""
    while True:
        mates = [i for i, r in enumerate(results) if same_sentence(r, result)]
        pair = next(((i, None) for i in mates if clash(result, [results[i]])), None) or next(
            ((i, j) for i in mates for j in mates if i < j and clash(results[j], [results[i]])), None)
        if pair is None:
            return result
        i, j = pair
        a, b = (results[i], result) if j is None else (results[i], results[j])
        loser, winner = (b, a) if gives_way(b, a) else (a, b)
        doc = auto_filled(winner)
        paper = next(c.paper for c in loser.candidates if c.doc_id == doc)
        assert loser.slot is not None
        excluded.setdefault(loser.slot.index, set()).add(paper.doc_id)
        at = len(results) if loser is result else results.index(loser)
        again = gave_way(cite(loser.slot, results[:at]), paper.title, winner, loser.selection.confidence)
        if loser is result:
            result = again
        else:
            results[at] = hold_back(again, results[:at], threshold)
