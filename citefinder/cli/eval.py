"""``citefinder eval``: per-stage quality on a benchmark query file, with ablation switches."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from citefinder.errors import InputError

METRICS = ("recall@1", "recall@5", "recall@10", "recall@20", "recall@100", "mrr", "ndcg@10")


def add_parser(sub: Any, common: Any) -> None:
    p = sub.add_parser("eval", help="measure every stage on a benchmark query file (CiteME, AutoScholarQuery) "
                                    "or on real drafts with their own .bib (--drafts)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", type=Path, help="JSONL of queries (schema of ../shared/data)")
    src.add_argument("--drafts", type=Path, help="a folder of drafts (schema of ../shared/data/drafts-dev: "
                     "<paper>/draft.txt, refs.bib, gold.jsonl), or one paper's folder: each .bib is imported into "
                     "a fresh library, the draft filled, and every slot scored by BibTeX key")
    p.add_argument("--papers", help="with --drafts: comma-separated paper folders to use (default: all)")
    p.add_argument("--bib", default="refs-enriched.bib", help="with --drafts: the .bib file name in each paper folder "
                   "(default refs-enriched.bib; refs.bib for the bibliography as written)")
    p.add_argument("--libraries", type=Path, help="with --drafts: keep each paper's library here and reuse it while "
                   "its .bib is unchanged (default: a temporary folder, removed afterwards)")
    p.add_argument("--memory", type=Path, metavar="CONTEXTS.sqlite", help="with --drafts: each paper's library starts "
                   "its citation-context memory from this file (the contexts.sqlite of a library a pack was imported "
                   "into, e.g. with --split train): matched to its papers, never written back")
    p.add_argument("--split", help="keep one split (train/test) where the file has them")
    p.add_argument("--limit", type=int, help="evaluate the first N items only")
    p.add_argument("--stages", help="stages to print, comma-separated (default: every agent that ran, fused, reranked)")
    p.add_argument("--out", type=Path, help="write the full results (settings, metrics, outcomes) as JSON (never "
                   "over an input, a .bib or inside the library)")
    p.add_argument("--force", action="store_true",
                   help="replace an --out file that is read-only or that CiteFinder did not write for this "
                        "evaluation, keeping NAME.bak of it (never an input or a .bib)")
    g = p.add_argument_group("ablations")
    g.add_argument("--fusion", choices=("learned", "rrf", "max"))
    g.add_argument("--agents", help="retrieval agents to run, comma-separated (default: setting CITEFINDER_AGENTS)")
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
    from citefinder.pipeline.pipeline import Pipeline

    changes: dict[str, Any] = {}
    if args.fusion:
        changes["fusion"] = args.fusion
    if args.agents:
        changes["agents"] = tuple(a.strip() for a in args.agents.split(",") if a.strip())
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
    plan = _plan(args, settings)  # before any work: --out is never one of the inputs
    if args.drafts:
        return run_drafts(args, settings, plan)
    items = load_items(args.dataset, split=args.split, limit=args.limit)
    pipeline = Pipeline(settings, Library.open(settings))

    from tqdm import tqdm

    with tqdm(total=len(items), desc="evaluating", unit="item") as bar:
        result = evaluate(pipeline, items, dataset=args.dataset.name,
                          progress=lambda n, total, _o: bar.update(n - bar.n))
    stages = [s for s in args.stages.split(",") if s] if args.stages else list(result["stages"])
    print(format_table(result, stages))
    _write(args, plan, result)
    return 0


def _plan(args: argparse.Namespace, settings: Any) -> Any:
    """Where ``--out`` may go: never over the dataset, the drafts' files (their folder), the memory file, a .bib,
    nor inside the library, the drafts' folder or ``--libraries`` (checked here, before any work)."""
    from citefinder.cli.outputs import plan_output

    if args.libraries is not None and args.drafts is not None:
        _check_libraries(args.libraries, args.drafts)
    if args.out is None:
        return None
    inputs = {"the dataset": [args.dataset] if args.dataset else [],
              "the memory file": [args.memory] if args.memory else []}
    plan = plan_output("--out", args.out, inputs=inputs, owner=args.dataset or args.drafts, force=args.force,
                       library=None if args.drafts else Path(settings.library), of="this evaluation", parents=True)
    if args.drafts is not None:
        plan.protect_folder("the drafts folder", args.drafts)
    if args.libraries is not None:
        plan.protect_folder("the --libraries folder", args.libraries)
    return plan


def _check_libraries(libraries: Path, drafts: Path) -> None:
    """``--libraries`` holds one library folder per paper, replaced when its .bib changes: never a file, nor the
    drafts' folder or a folder inside it."""
    from citefinder.text.safewrite import resolve

    folder, root = resolve(libraries), resolve(drafts)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--libraries {libraries} is a file; give a folder (nothing was written).")
    if folder == root or root in folder.parents:
        raise InputError(f"--libraries {libraries} is inside the drafts folder {root}; give a folder outside it "
                         "(nothing was written).")


def _write(args: argparse.Namespace, plan: Any, result: dict[str, Any]) -> None:
    if plan is None:
        return
    from citefinder.cli.outputs import said_backups

    plan.put(args.out, json.dumps(result, indent=1, ensure_ascii=False).encode("utf-8"))
    said_backups(plan.commit())
    print(f"results written to {args.out}")


def run_drafts(args: argparse.Namespace, settings: Any, plan: Any = None) -> int:
    """``citefinder eval --drafts``: real drafts against their own bibliographies, scored by key."""
    import tempfile

    from citefinder.evaluate.drafts import evaluate_drafts

    root = args.drafts
    if (root / "draft.txt").exists():
        root, papers = root.parent, [root.name]
    else:
        papers = sorted(d.name for d in root.iterdir() if (d / "draft.txt").exists()) if root.is_dir() else []
    if args.papers:
        papers = [p.strip() for p in args.papers.split(",") if p.strip()]
    missing = [p for p in papers if not (root / p / "gold.jsonl").exists() or not (root / p / args.bib).exists()]
    if not papers or missing:
        raise InputError(f"{args.drafts}: no draft folder with draft.txt, {args.bib} and gold.jsonl"
                         + (f" ({', '.join(missing)} incomplete)" if missing else ""))
    with tempfile.TemporaryDirectory(prefix="citefinder-drafts-") as tmp:
        libraries = args.libraries or Path(tmp)
        result = evaluate_drafts(root, papers, settings, libraries, bib_name=args.bib, memory=args.memory,
                                 progress=lambda name, n, total: print(f"[{n}/{total}] {name}", flush=True))
    print(format_table(result, list(result["stages"]), metrics=DRAFT_METRICS))
    _write(args, plan, result)
    return 0


DRAFT_METRICS = ("hit@1", "hit@5", "hit@10", "hit@20", "mrr")


def format_table(result: dict[str, Any], stages: list[str], metrics: tuple[str, ...] = METRICS) -> str:
    size = result["library"]["papers"] if "library" in result else sum(result.get("library_sizes", {}).values())
    lines = [f"{result['dataset']}: {result['items']} items, library of {size} papers",
             "| stage | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for stage in stages:
        m = result["stages"].get(stage, {})
        lines.append(f"| {stage} | " + " | ".join(f"{m.get(k, 0):.3f}" for k in metrics) + " |")
    sel = result["selection"]
    lines.append("selection: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) and v <= 1 else f"{k} {v:g}"
                                           for k, v in sel.items()))
    lat = result["latency"]
    if lat:
        lines.append(f"latency per item: p50 {lat['p50_s']:.3f} s, p95 {lat['p95_s']:.3f} s")
    return "\n".join(lines)
