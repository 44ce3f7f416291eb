"""``citefinder eval``: per-stage quality on a benchmark query file, with ablation switches."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from citefinder.evaluate.runner import STAGES

METRICS = ("recall@1", "recall@5", "recall@10", "recall@20", "recall@100", "mrr", "ndcg@10")


def add_parser(sub: Any, common: Any) -> None:
    p = sub.add_parser("eval", help="measure every stage on a benchmark query file (CiteME, AutoScholarQuery)")
    p.add_argument("--dataset", type=Path, required=True, help="JSONL of queries (schema of ../shared/data)")
    p.add_argument("--split", help="keep one split (train/test) where the file has them")
    p.add_argument("--limit", type=int, help="evaluate the first N items only")
    p.add_argument("--stages", default=",".join(STAGES), help=f"stages to print (default {','.join(STAGES)})")
    p.add_argument("--out", type=Path, help="write the full results (settings, metrics, outcomes) as JSON")
    g = p.add_argument_group("ablations")
    g.add_argument("--fusion", choices=("rrf", "max"))
    g.add_argument("--rrf-k", type=int)
    g.add_argument("--k", type=int, help="candidate depth of each retriever (k_bm25 = k_dense)")
    g.add_argument("--rerank-top-n", type=int)
    g.add_argument("--threshold", type=float, help="confidence threshold of the no-LLM selector")
    g.add_argument("--context-sentences", type=int, help="neighbouring sentences on each side of a slot in the query")
    g.add_argument("--rerank-blend", choices=("rrf", "replace"), help="fuse rerank and fused ranks, or rerank alone")
    common(p)


def run(args: argparse.Namespace, settings: Any) -> int:
    from citefinder.evaluate import evaluate, load_items
    from citefinder.library.store import Library
    from citefinder.pipeline import Pipeline

    changes: dict[str, Any] = {}
    if args.fusion:
        changes["fusion"] = args.fusion
    if args.rrf_k is not None:
        changes["rrf_k"] = args.rrf_k
    if args.k is not None:
        changes["k_bm25"] = changes["k_dense"] = args.k
    if args.rerank_top_n is not None:
        changes["rerank_top_n"] = args.rerank_top_n
    if args.threshold is not None:
        changes["confidence_threshold"] = args.threshold
    if args.context_sentences is not None:
        changes["context_sentences"] = args.context_sentences
    if args.rerank_blend:
        changes["rerank_blend"] = args.rerank_blend
    settings = settings.with_overrides(**changes) if changes else settings
    items = load_items(args.dataset, split=args.split, limit=args.limit)
    pipeline = Pipeline(settings, Library.open(settings))

    from tqdm import tqdm

    with tqdm(total=len(items), desc="evaluating", unit="item") as bar:
        result = evaluate(pipeline, items, dataset=args.dataset.name, progress=lambda n, total, _o: bar.update(n - bar.n))
    print(format_table(result, [s for s in args.stages.split(",") if s]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False))
        print(f"results written to {args.out}")
    return 0


def format_table(result: dict[str, Any], stages: list[str]) -> str:
    lines = [f"{result['dataset']}: {result['items']} items, library of {result['library']['papers']} papers",
             "| stage | " + " | ".join(METRICS) + " |", "|---" * (len(METRICS) + 1) + "|"]
    for stage in stages:
        m = result["stages"].get(stage, {})
        lines.append(f"| {stage} | " + " | ".join(f"{m.get(k, 0):.3f}" for k in METRICS) + " |")
    sel = result["selection"]
    lines.append("selection: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) and v <= 1 else f"{k} {v:g}"
                                           for k, v in sel.items()))
    lat = result["latency"]
    if lat:
        lines.append(f"latency per item: p50 {lat['p50_s']:.3f} s, p95 {lat['p95_s']:.3f} s")
    return "\n".join(lines)
