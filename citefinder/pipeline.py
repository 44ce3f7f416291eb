"""The citation pipeline: reformulate -> bm25 + dense -> fuse -> rerank -> select, per slot.

Each agent returns its output and a :class:`StageTrace`; a :class:`SlotResult` carries all six
traces in that order, plus "rewrite" right after "reformulate" when ``llm_rewrite`` is on.
Optional stages (rerank, LLM) degrade and say so in their trace; the retrievers are required
together: the pipeline raises only when both fail.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from citefinder.errors import CitefinderError, EmptyLibraryError, NoSlotsError
from citefinder.calibration import DEFAULT_CALIBRATION, RETRIEVERS, Calibration
from citefinder.fuse import fuse, fuse_candidates
from citefinder.rerank import Reranker, make_reranker
from citefinder.retrieve.bm25 import retrieve_bm25
from citefinder.retrieve.dense import retrieve_dense
from citefinder.retrieve.reformulate import reformulate
from citefinder.rewrite import LLMRewriter, skipped_rewrite
from citefinder.select.base import Selector, make_selector
from citefinder.select.fallback import selection_hits
from citefinder.types import Candidate, Query, Selection, Slot, SlotResult, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

Progress = Callable[[int, int, "SlotResult | None"], None]


def make_rewriter(settings: "Settings") -> LLMRewriter | None:
    """The LLM query rewriter when ``llm_rewrite`` is on and an LLM is configured, else None."""
    return LLMRewriter(settings) if settings.llm_rewrite and settings.llm_model else None


class Pipeline:
    """Runs the agents for citation slots (:meth:`cite_text`, :meth:`cite_slot`) or a question (:meth:`search`).

    ``reranker`` and ``selector`` default to what the settings configure; pass them to share
    loaded models between pipelines or to script them in tests.
    """

    def __init__(
        self,
        settings: "Settings",
        library: "Library",
        *,
        reranker: Reranker | None = None,
        selector: Selector | None = None,
        rewriter: LLMRewriter | None = None,
        calibration: Calibration = DEFAULT_CALIBRATION,
    ) -> None:
        self.settings = settings
        self.calibration = calibration
        self.library = library
        self.reranker = reranker if reranker is not None else make_reranker(settings)
        self.selector = selector if selector is not None else make_selector(settings)
        self.rewriter = rewriter if rewriter is not None else make_rewriter(settings)

    # --- public ----------------------------------------------------------------------------------

    def cite_text(self, text: str, *, progress: Progress | None = None) -> list[SlotResult]:
        """Find every slot in ``text`` and cite each; ``progress(done, total, last_result)``.

        With an LLM, slots run ``llm_concurrency`` at a time and an LLM that fails twice is not
        asked again in this call (:mod:`citefinder.concurrency`); results are in slot order.
        """
        from citefinder.concurrency import cite_slots
        from citefinder.slots import find_slots

        self._require_papers()
        slots = find_slots(text, self.settings.context_sentences)
        if not slots:
            raise NoSlotsError()
        return cite_slots(self, slots, progress=progress)

    def cite_slot(self, slot: Slot) -> SlotResult:
        """Retrieve, fuse, rerank and select for one slot."""
        query, t_reform = reformulate(slot)
        before: tuple[StageTrace, ...] = (t_reform,)
        if self.settings.llm_rewrite:
            query, t_rewrite = self._rewrite(query, slot.context)
            before += (t_rewrite,)
        candidates, traces = self._rank(query, before)
        retrievers = self._retrievers(traces)
        confidences = self.calibration.confidences(candidates, retrievers)
        shown = candidates[: self.settings.select_candidates]
        selection, t_select = self.selector.select(query, shown, confidences, context=slot.context)
        t_select = self._explain_confidence(t_select, shown, retrievers)
        return SlotResult(slot, query, candidates, selection, traces + (t_select,))

    def search(self, question: str) -> SlotResult:
        """Rank the library for a free-text question; the top candidate is the "selection"."""
        self._require_papers()
        query, t_reform = reformulate(question)
        candidates, traces = self._rank(query, (t_reform,))
        start = time.perf_counter()
        confidences = self.calibration.confidences(candidates, self._retrievers(traces))
        if candidates:
            top = candidates[0]
            selection = Selection("found", top.paper, confidences.get(top.doc_id, 0.0), "ranking")
        else:
            selection = Selection("not_found", method="ranking")
        t_select = StageTrace(
            agent="select",
            status="skipped",
            message="skipped: search shows the ranking, the top candidate first",
            inputs={"candidates": len(candidates)},
            params={"method": "ranking"},
            top=selection_hits(candidates[: self.settings.select_candidates], confidences),
            elapsed_s=time.perf_counter() - start,
        )
        return SlotResult(None, query, candidates, selection, traces + (t_select,))

    # --- stages ----------------------------------------------------------------------------------

    def _require_papers(self) -> None:
        if self.library.count() == 0:
            raise EmptyLibraryError(str(self.library.path))

    def _rewrite(self, query: Query, context: str) -> tuple[Query, StageTrace]:
        if self.rewriter is None:
            return query, skipped_rewrite("llm_rewrite is on but no LLM is configured (setting llm_model)")
        return self.rewriter.rewrite(query, context)

    def _rank(
        self, query: Query, before: tuple[StageTrace, ...]
    ) -> tuple[tuple[Candidate, ...], tuple[StageTrace, ...]]:
        """The query -> bm25 + dense -> fuse -> rerank; returns candidates and ``before`` + four traces."""
        s = self.settings
        bm25_lists, t_bm25 = retrieve_bm25(self.library, query, s.k_bm25)
        dense_lists, t_dense = retrieve_dense(self.library, query, s.k_dense)
        if t_bm25.status == "error" and t_dense.status == "error":
            raise CitefinderError(
                f"Both retrievers failed. bm25: {t_bm25.message}. dense: {t_dense.message}. "
                "Check the library folder (setting CITEFINDER_LIBRARY) or rebuild it from the Library page."
            )
        rankings = {**bm25_lists, **dense_lists}

        start = time.perf_counter()
        keep = max(s.fused_top_n, s.rerank_top_n)
        head_ids = [doc_id for doc_id, _ in fuse(rankings, s.fusion, s.rrf_k)[:keep]]
        papers = {p.doc_id: p for p in self.library.get(head_ids)}
        lookup_s = time.perf_counter() - start
        fused, t_fuse = fuse_candidates(papers, rankings, s.fusion, s.rrf_k, limit=keep)
        t_fuse = replace(t_fuse, elapsed_s=t_fuse.elapsed_s + lookup_s)  # the paper lookup is part of fusing

        reranked, t_rerank = self.reranker.rerank(query, fused, s.rerank_top_n)
        reranked = reranked + fused[len(reranked) :]  # below the rerank depth the fused order continues
        return reranked, before + (t_bm25, t_dense, t_fuse, t_rerank)

    def _retrievers(self, traces: tuple[StageTrace, ...]) -> list[str]:
        """The retrievers whose main query returned a list (what the calibration conditions on).

        Confidences come from :mod:`citefinder.calibration`; a cross-encoder's sigmoid stays in the
        rerank trace: it is not calibrated, so it does not decide whether a slot is found.
        """
        lists = next(t for t in traces if t.agent == "fuse").inputs.get("lists", {})
        return [name for name in RETRIEVERS if name in lists]

    def _explain_confidence(self, trace: StageTrace, shown: tuple[Candidate, ...], retrievers: list[str]) -> StageTrace:
        """Add to the select trace why the top candidate has its confidence."""
        if not shown:
            return trace
        bucket = self.calibration.of(shown[0], retrievers)
        basis = (
            f"top candidate: {bucket.describe}; papers placed like that were right "
            f"{bucket.precision:.0%} of the time in calibration"
        )
        return replace(
            trace,
            details={**trace.details, "confidence_basis": {"bucket": bucket.name, "precision": bucket.precision,
                                                           "explanation": basis}},
        )
