"""The citation pipeline: reformulate -> retrieval agents -> fuse -> rerank -> select, per slot.

Each stage returns its output and a :class:`StageTrace`; a :class:`SlotResult` carries the traces in
that order: "reformulate" ("rewrite" after it when ``llm_rewrite`` is on), one per retrieval agent
(``kind == "retriever"``, the agents ``settings.agents`` names), "fuse", "rerank", "select".
Optional stages (rerank, LLM) degrade and say so in their trace; the retrieval agents are required
together: the pipeline raises only when every agent that had something to search failed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from citefinder.errors import CitefinderError, EmptyLibraryError, NoSlotsError
from citefinder.library.sample import hidden_ids
from citefinder.pipeline.concurrency import cite_slots
from citefinder.pipeline.second import second_paper
from citefinder.rank.calibration import Calibration, default_calibration
from citefinder.rank.fuse import Fusion, fuse, fuse_candidates, fusion_of
from citefinder.rank.rerank import Reranker, make_reranker
from citefinder.retrieve.agents.draft import draft_context
from citefinder.retrieve.base import Agent, Rankings, retrieve
from citefinder.retrieve.query.cocite import seeds_near
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.retrieve.query.rewrite import LLMRewriter, Rewriter, skipped_rewrite
from citefinder.retrieve.registry import keep_indexes_current, make_agents
from citefinder.select import open_world
from citefinder.select.base import Selector, make_selector
from citefinder.select.fallback import selection_hits
from citefinder.select.named import Owners, apply_named
from citefinder.types import Candidate, Hit, Query, Selection, Slot, SlotResult, StageTrace

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

Progress = Callable[[int, int, "SlotResult | None"], None]


class Literature(Protocol):
    """What adds a slot's papers not in the library to its result, after the selection
    (:class:`citefinder.pipeline.literature.LiteratureTier`)."""

    def extend(self, result: SlotResult, *, top_confidence: float, exclude: frozenset[str] = ...,
               check: bool = ...) -> SlotResult: ...


def make_rewriter(settings: "Settings") -> LLMRewriter | None:
    """The LLM query rewriter when ``llm_rewrite`` is on and an LLM is configured, else None."""
    return LLMRewriter(settings) if settings.llm_rewrite and settings.llm_model else None


class Pipeline:
    """Runs the agents for citation slots (:meth:`cite_text`, :meth:`cite_slot`) or a question (:meth:`search`).

    ``reranker`` and ``selector`` default to what the settings configure; pass them to share
    loaded models between pipelines or to script them in tests. ``literature``: the papers not in the library
    offered beside each slot's own (:mod:`citefinder.pipeline.literature`; never selected).
    """

    def __init__(
        self,
        settings: "Settings",
        library: "Library",
        *,
        reranker: Reranker | None = None,
        selector: Selector | None = None,
        rewriter: Rewriter | None = None,
        calibration: Calibration | None = None,
        agents: list[Agent] | None = None,
        fusion: Fusion | None = None,
        literature: Literature | None = None,
    ) -> None:
        self.settings = settings
        self.literature = literature
        self.open_world = open_world.default_open_world()  # the literature's check of a fill, when one is set
        self.library = library
        self.calibration = calibration if calibration is not None else default_calibration()
        self.agents = agents if agents is not None else make_agents(settings, library)
        keep_indexes_current(settings, library)
        self.fusion = fusion if fusion is not None else fusion_of(settings)
        self.question_fusion = fusion if fusion is not None else fusion_of(settings, "questions")
        self.reranker = reranker if reranker is not None else make_reranker(settings)
        self.selector = selector if selector is not None else make_selector(settings)
        self.rewriter: Rewriter | None = rewriter if rewriter is not None else make_rewriter(settings)
        # which papers own the names sentences write, the literature's too when it is a library (select/named.py)
        self.owners = Owners(library, getattr(getattr(literature, "search", None), "view", None))
        # the sample library's papers, left out once the user has papers of their own (citefinder.library.sample)
        self.exclude = hidden_ids(library, settings.suggest_sample)

    # --- public ----------------------------------------------------------------------------------

    def cite_text(self, text: str, *, progress: Progress | None = None, latex: bool | None = None) -> list[SlotResult]:
        """Find every slot in ``text`` and cite each; ``progress(done, total, last_result)``; ``latex``
        says how to read it (default: as it looks; a .tex file is LaTeX whatever it looks like).

        The draft's start (its title and abstract) is every slot's draft context (agent "draft").
        With an LLM, slots run ``llm_concurrency`` at a time and an LLM that fails twice is not
        asked again in this call (:mod:`citefinder.pipeline.concurrency`); results are in slot order.
        """
        from citefinder.text.slots import find_slots

        self._require_papers()
        slots = find_slots(text, self.settings.context_sentences, latex=latex)
        if not slots:
            raise NoSlotsError()
        seeds = seeds_near(text, slots, self.settings.cocited_chars, self._key_doc)
        return cite_slots(self, slots, progress=progress, draft=draft_context(text), seeds=seeds)

    def cite_slot(self, slot: Slot, *, draft: str = "", cocited: Sequence[str] = (),
                  exclude: Sequence[str] = (), draft_slots: int | None = None) -> SlotResult:
        """Retrieve, fuse, rerank and select for one slot; ``draft`` is the whole draft's context, if any;
        ``cocited`` the library papers the draft cites near the slot (agent "co-cited"); ``exclude`` papers
        this slot may not cite (another marker of its sentence has them: :mod:`citefinder.select.sentences`),
        left out as if the library did not hold them; ``draft_slots`` how many slots the draft has (the confidence
        is adjusted to the draft's length and the library's size: :meth:`Calibration.adjusted`)."""
        query, candidates, traces = self.rank_slot(slot, draft=draft, cocited=cocited, exclude=exclude)
        ran = self._agents_ran(traces)
        size = self.library.count() - len(self.exclude)
        confidences = self.calibration.confidences(candidates, ran, size, draft_slots, text=slot.sentence)
        shown = candidates[: self.settings.select_candidates]
        selection, t_select = self.selector.select(query, shown, confidences, context=slot.context)
        if self.settings.named_rule:  # a named work is filled with its own paper or not at all (select/named.py)
            selection, t_select, shown = apply_named(slot.focus or slot.sentence, shown, selection, t_select,
                                                     self.owners, self.settings.confidence_threshold)
            first = {c.doc_id for c in shown}
            candidates = shown + tuple(c for c in candidates if c.doc_id not in first)
        if self.settings.second_paper:
            selection = second_paper(query, shown, confidences, selection)
            if selection.also:
                t_select = replace(t_select, details={**t_select.details, "also": [p.doc_id for p in selection.also]})
        t_select = self._explain_confidence(t_select, shown, ran, size, draft_slots, slot.sentence)
        result = SlotResult(slot, query, candidates, selection, traces + (t_select,))
        if self.literature is not None:  # after the selection: a literature paper is never selected
            top = confidences.get(candidates[0].doc_id, 0.0) if candidates else 0.0
            rule = self.open_world
            # a fill the literature could still beat is checked against it (select/open_world.py): asked whatever
            # its confidence, which the literature's trace states as it is (never "0.00 is below ...")
            check = rule is not None and selection.status == "found" and rule.could_withdraw(top)
            result = open_world.check(self.literature.extend(result, top_confidence=top, exclude=self.exclude,
                                                             check=check), rule)
        return result

    def rank_slot(self, slot: Slot, *, draft: str = "", cocited: Sequence[str] = (),
                  exclude: Sequence[str] = ()) -> tuple[Query, tuple[Candidate, ...], tuple[StageTrace, ...]]:
        """The slot's query, its ranked candidates and the traces so far (reformulate, agents, fuse, rerank):
        :meth:`cite_slot` without the selection (what a check of a written citation needs)."""
        query, t_reform = reformulate(slot)
        if draft:
            query = replace(query, draft=f"{slot.heading}. {draft}" if slot.heading else draft)
        if cocited:
            query = replace(query, cocited=tuple(dict.fromkeys(cocited)))
        before: tuple[StageTrace, ...] = (t_reform,)
        if self.settings.llm_rewrite:
            query, t_rewrite = self._rewrite(query, slot.context)
            before += (t_rewrite,)
        candidates, traces = self._rank(query, before, exclude=frozenset(exclude))
        return query, candidates, traces

    def rank_query(self, query: Query) -> tuple[tuple[Candidate, ...], tuple[StageTrace, ...]]:
        """A query already made (another library's slot query) -> agents -> fuse -> rerank: its candidates and
        the agents', "fuse" and "rerank" traces."""
        return self._rank(query, ())

    def agents_ran(self, traces: tuple[StageTrace, ...]) -> list[str]:
        """The retrieval agents that returned a list in ``traces`` (what the confidence reads)."""
        return self._agents_ran(traces)

    def search(self, question: str) -> SlotResult:
        """Rank the library for a free-text question; the top candidate is the "selection"."""
        self._require_papers()
        query, t_reform = reformulate(question)
        candidates, traces = self._rank(query, (t_reform,), self.question_fusion)
        start = time.perf_counter()
        confidences = self.calibration.confidences(candidates, self._agents_ran(traces),
                                                   self.library.count() - len(self.exclude))
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

    def _key_doc(self, key: str) -> str | None:
        paper = self.library.by_key(key)
        return paper.doc_id if paper is not None else None

    def _require_papers(self) -> None:
        if self.library.count() == 0:
            raise EmptyLibraryError(str(self.library.path))

    def _rewrite(self, query: Query, context: str) -> tuple[Query, StageTrace]:
        if self.rewriter is None:
            return query, skipped_rewrite("llm_rewrite is on but no LLM is configured (setting llm_model)")
        return self.rewriter.rewrite(query, context)

    def _rank(
        self, query: Query, before: tuple[StageTrace, ...], fusion: Fusion | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> tuple[tuple[Candidate, ...], tuple[StageTrace, ...]]:
        """The query -> agents -> fuse -> rerank; returns candidates and ``before`` + the agents' traces,
        "fuse" and "rerank"."""
        s = self.settings
        fusion = fusion or self.fusion
        rankings, t_agents = retrieve(self.agents, query)
        if self.exclude or exclude:
            rankings, t_agents = without(self.exclude | exclude, rankings, t_agents)
        failed = [t for t in t_agents if t.status == "error"]
        if failed and not rankings:
            raise CitefinderError(
                "Every retrieval agent failed. "
                + ". ".join(f"{t.agent}: {t.message}" for t in failed)
                + ". Check the library folder (setting CITEFINDER_LIBRARY) or rebuild it from the Library page."
            )

        start = time.perf_counter()
        keep = max(s.fused_top_n, s.rerank_top_n)
        head_ids = [doc_id for doc_id, _ in fuse(rankings, fusion)[:keep]]
        papers = {p.doc_id: p for p in self.library.get(head_ids)}
        lookup_s = time.perf_counter() - start
        fused, t_fuse = fuse_candidates(papers, rankings, fusion, limit=keep)
        t_fuse = replace(t_fuse, elapsed_s=t_fuse.elapsed_s + lookup_s)  # the paper lookup is part of fusing

        reranked, t_rerank = self.reranker.rerank(query, fused, s.rerank_top_n)
        reranked = reranked + fused[len(reranked) :]  # below the rerank depth the fused order continues
        return reranked, before + t_agents + (t_fuse, t_rerank)

    @staticmethod
    def _agents_ran(traces: tuple[StageTrace, ...]) -> list[str]:
        """The retrieval agents that returned a list (what the confidence reads, as in its training data)."""
        return [t.agent for t in traces if t.kind == "retriever" and t.status == "ok" and t.top]

    def _explain_confidence(
        self, trace: StageTrace, shown: tuple[Candidate, ...], ran: list[str], size: int,
        draft_slots: int | None = None, text: str = "",
    ) -> StageTrace:
        """Add to the select trace why the top candidate has its confidence."""
        if not shown:
            return trace
        basis = self.calibration.explain(shown, ran, size, draft_slots, text)
        return replace(trace, details={**trace.details, "confidence_basis": basis})


def without(exclude: frozenset[str], rankings: Rankings,
            traces: tuple[StageTrace, ...]) -> tuple[Rankings, tuple[StageTrace, ...]]:
    """The agents' lists and traces with the ``exclude`` papers taken out and the others ranked up,
    as if the library did not hold them."""

    def kept(hits: Sequence[Hit]) -> tuple[Hit, ...]:
        return tuple(Hit(h.doc_id, r, h.score) for r, h in enumerate((h for h in hits if h.doc_id not in exclude), 1))

    return ({name: kept(hits) for name, hits in rankings.items()},
            tuple(replace(t, top=kept(t.top)) if t.kind == "retriever" else t for t in traces))
