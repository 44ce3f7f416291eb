"""Run the pipeline over benchmark items and score every stage.

Per stage (each retrieval agent that ran, then fused and reranked) a BEIR-style ``run`` dict is
built from the traces, and scored with :mod:`citefinder.evaluate.metrics`. The selector is scored as slot filling: top-1
accuracy on answerable items (also the official CiteME way, title similarity > 0.8), abstention
and wrong-pick rates, and the hallucination rate (a selected paper not in the library).
"""

from __future__ import annotations

import difflib
import logging
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from citefinder.evaluate.dataset import EvalItem
from citefinder.evaluate.metrics import evaluate_run
from citefinder.rank.fuse import Fusion, fuse
from citefinder.types import Hit, Slot, SlotResult

log = logging.getLogger(__name__)

FINAL_STAGES = ("fused", "reranked")
Progress = Callable[[int, int, "ItemOutcome | None"], None]


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one item: gold ranks per stage, the selection and the time taken."""

    id: str
    text: str
    gold: tuple[str, ...]
    answerable: bool
    runs: dict[str, dict[str, float]]  # stage -> {doc_id: score}
    gold_rank: dict[str, int | None]  # stage -> best 1-based rank of a gold paper
    selected: str | None
    selected_title: str | None
    status: str
    confidence: float
    method: str
    elapsed_s: float
    stage_s: dict[str, float] = field(default_factory=dict)
    result: dict[str, Any] | None = None  # full SlotResult.to_dict() (traces) for misses
    lists: dict[str, list[tuple[str, int, float]]] = field(default_factory=dict)  # agent list -> (doc, rank, score)
    selected_all: tuple[str, ...] = ()  # every paper selected for the slot (a cite of several: \cite{a,b})

    @property
    def correct(self) -> bool:
        return self.selected is not None and self.selected in self.gold


def item_slot(item: EvalItem, context_sentences: int = 1) -> Slot | None:
    """The item's first citation slot, with ``context_sentences`` neighbours; None for a question."""
    from citefinder.text.slots import find_slots

    slots = find_slots(item.text, context_sentences)
    return slots[0] if slots else None


def _ranked(hits: Sequence[Hit]) -> dict[str, float]:
    # scores for the metrics are derived from ranks so that ties and score scales never matter
    return {h.doc_id: 1.0 / h.rank for h in hits}


def agent_lists(result: SlotResult) -> dict[str, tuple[Hit, ...]]:
    """Every ranked list the retrieval agents returned (``name`` and its variants ``name#i``)."""
    lists: dict[str, tuple[Hit, ...]] = {}
    for t in result.traces:
        if t.kind != "retriever":
            continue
        if t.top:
            lists[t.agent] = tuple(t.top)
        for key, hits in (t.details.get("variants") or {}).items():
            lists[key] = tuple(Hit(h["doc_id"], h["rank"], h["score"]) for h in hits)
    return lists


def stages_of(outcomes: Sequence["ItemOutcome"]) -> list[str]:
    """The stages scored: the agents that ran on any item (in first-seen order), then fused and reranked."""
    names: list[str] = []
    for o in outcomes:
        for stage in o.runs:
            if stage not in names and stage not in FINAL_STAGES:
                names.append(stage)
    return names + list(FINAL_STAGES)


def stage_runs(result: SlotResult, fusion: Fusion) -> dict[str, dict[str, float]]:
    """Per-stage rankings of one result, as ``{doc_id: score}`` (higher is better)."""
    lists = agent_lists(result)
    fused = [Hit(d, i, s) for i, (d, s) in enumerate(fuse(lists, fusion), start=1)]
    # reranked: the final candidate order, then the rest of the fused list beyond the rerank depth
    head = [c.doc_id for c in result.candidates]
    tail = [h.doc_id for h in fused if h.doc_id not in set(head)]
    reranked = [Hit(d, i, 0.0) for i, d in enumerate(head + tail, start=1)]
    runs = {name: _ranked(hits) for name, hits in lists.items() if "#" not in name}
    runs["fused"] = _ranked(fused)
    runs["reranked"] = _ranked(reranked)
    return runs


def best_gold_rank(run: dict[str, float], gold: Sequence[str]) -> int | None:
    order = sorted(run, key=lambda d: (-run[d], d))
    ranks = [order.index(g) + 1 for g in gold if g in run]
    return min(ranks) if ranks else None


def run_items(
    pipeline: Any, items: Sequence[EvalItem], *, progress: Progress | None = None, keep_traces: bool = True
) -> list[ItemOutcome]:
    """Cite (or search) every item and collect its per-stage outcome."""
    s = pipeline.settings
    outcomes: list[ItemOutcome] = []
    for n, item in enumerate(items, start=1):
        t0 = time.perf_counter()
        slot = item_slot(item, s.context_sentences)
        result = pipeline.cite_slot(slot) if slot is not None else pipeline.search(item.text)
        elapsed = time.perf_counter() - t0
        runs = stage_runs(result, pipeline.fusion if slot is not None else pipeline.question_fusion)
        sel = result.selection
        out = ItemOutcome(
            id=item.id,
            text=item.text,
            gold=item.gold,
            answerable=item.answerable and bool(item.gold),
            runs=runs,
            lists={k: [(h.doc_id, h.rank, round(h.score, 5)) for h in v] for k, v in agent_lists(result).items()},
            gold_rank={stage: best_gold_rank(run, item.gold) for stage, run in runs.items()},
            selected=sel.paper.doc_id if sel.status == "found" and sel.paper else None,
            selected_title=sel.paper.title if sel.status == "found" and sel.paper else None,
            status=sel.status,
            confidence=sel.confidence,
            method=sel.method,
            elapsed_s=elapsed,
            stage_s={t.agent: t.elapsed_s for t in result.traces},
            result=result.to_dict() if keep_traces else None,
        )
        outcomes.append(out)
        if progress:
            progress(n, len(items), out)
    return outcomes


def title_match(a: str | None, golds: Sequence[str], threshold: float = 0.8) -> bool:
    """The official CiteME rule: lowercased difflib ratio > 0.8 with any gold title."""
    if not a:
        return False
    return any(difflib.SequenceMatcher(None, a.lower(), g.lower()).ratio() > threshold for g in golds)


def selection_metrics(
    outcomes: Sequence[ItemOutcome], items: Sequence[EvalItem], library_ids: set[str] | None = None
) -> dict[str, float]:
    """Slot-filling metrics of the selector."""
    by_id = {i.id: i for i in items}
    ans = [o for o in outcomes if o.answerable]
    una = [o for o in outcomes if not o.answerable]
    picked = [o for o in outcomes if o.selected]
    m: dict[str, float] = {"answerable": float(len(ans)), "unanswerable": float(len(una))}
    if ans:
        m["top1_accuracy"] = sum(o.correct for o in ans) / len(ans)
        m["top1_citeme_title"] = sum(title_match(o.selected_title, by_id[o.id].gold_titles) for o in ans) / len(ans)
        m["wrong_pick_rate_answerable"] = sum(bool(o.selected) and not o.correct for o in ans) / len(ans)
        m["abstained_answerable"] = sum(o.selected is None for o in ans) / len(ans)
    if una:
        m["abstention_rate"] = sum(o.selected is None for o in una) / len(una)
        m["wrong_pick_rate_unanswerable"] = sum(o.selected is not None for o in una) / len(una)
    if library_ids is not None:
        m["hallucination_rate"] = (sum(o.selected not in library_ids for o in picked) / len(picked)) if picked else 0.0
    return m


def score(
    outcomes: Sequence[ItemOutcome], items: Sequence[EvalItem], library_ids: set[str] | None = None
) -> dict[str, Any]:
    """Per-stage retrieval metrics (answerable items) plus selection metrics and latency."""
    qrels = {o.id: {g: 1 for g in o.gold} for o in outcomes if o.answerable}
    stages = {stage: evaluate_run(qrels, {o.id: o.runs.get(stage, {}) for o in outcomes})
              for stage in stages_of(outcomes)}
    lat = sorted(o.elapsed_s for o in outcomes)
    latency = {"p50_s": lat[len(lat) // 2], "p95_s": lat[min(len(lat) - 1, int(len(lat) * 0.95))]} if lat else {}
    return {"stages": stages, "selection": selection_metrics(outcomes, items, library_ids), "latency": latency}


def code_version() -> str:
    try:
        root = Path(__file__).resolve().parents[2]
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True,
                             timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
