"""Evaluation harness: benchmark items -> per-stage metrics, selection metrics, misses."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, Sequence

from citefinder.evaluate.dataset import EvalItem, load_items
from citefinder.evaluate.runner import ItemOutcome, Progress, code_version, run_items, score

__all__ = ["EvalItem", "ItemOutcome", "evaluate", "load_items"]


def evaluate(pipeline: Any, items: Sequence[EvalItem], *, dataset: str = "", progress: Progress | None = None,
             keep_traces: bool = True) -> dict[str, Any]:
    """Run and score ``items``; the result is plain JSON-able data with the settings it was made with."""
    lib = pipeline.library
    t0 = time.perf_counter()
    outcomes = run_items(pipeline, items, progress=progress, keep_traces=keep_traces)
    picked = [o.selected for o in outcomes if o.selected]
    known = {p.doc_id for p in lib.get(picked)} if picked else set()
    settings = pipeline.settings.model_dump(mode="json", exclude={"llm_api_key"})
    return {
        "dataset": dataset,
        "items": len(items),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "code_version": code_version(),
        "library": {"path": str(lib.path), "papers": lib.count(), "embedder": lib.embedder.spec.to_dict()},
        "settings": settings,
        "reranker": type(pipeline.reranker).__name__,
        "selector": type(pipeline.selector).__name__,
        "wall_s": time.perf_counter() - t0,
        **score(outcomes, items, known),
        "outcomes": [asdict(o) for o in outcomes],
    }
