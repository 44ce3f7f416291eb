"""Score CiteFinder on real drafts (drafts-dev) end to end, per stage, by BibTeX key.

    python bench/drafts_eval.py --part train --out bench/out/drafts-train.json
    python bench/drafts_eval.py --part test --out bench/out/drafts-test.json [--agents bm25,dense] [--fusion rrf]
    python bench/drafts_eval.py --part test --embedder FOLDER --libraries bench/out/drafts-libs-NAME --out ...

Each paper's .bib is imported into its own library under --libraries (reused while the .bib is
unchanged), draft.txt is filled, and every slot is scored against gold.jsonl. The split by paper is
bench/drafts_split.json (fixed before any tuning; never tune on the test part).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--part", choices=("train", "test", "all"), default="train")
    p.add_argument("--papers", help="comma-separated paper names (instead of --part)")
    p.add_argument("--bib", default="refs-enriched.bib", help="refs-enriched.bib (default) or refs.bib")
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/drafts-libs")
    p.add_argument("--embedder", help="the libraries' embedder (minilm, mpnet, a model folder); give each its own "
                   "--libraries folder")
    p.add_argument("--query-encoder", help="same (the library's embedder), trained (the shipped query encoder) or a "
                   "folder: what embeds the queries (the libraries' papers keep their vectors)")
    p.add_argument("--reranker", help="none, trained (the shipped cross-encoder) or a cross-encoder folder")
    p.add_argument("--rerank-top-n", type=int, help="candidates the reranker re-scores")
    p.add_argument("--rerank-blend", choices=("rrf", "replace"))
    p.add_argument("--agents")
    p.add_argument("--fusion", choices=("learned", "rrf", "max"))
    p.add_argument("--threshold", type=float)
    p.add_argument("--second-paper", choices=("on", "off"), help="the engine's proposal of a second paper")
    p.add_argument("--traces", action="store_true", help="keep every slot's full result (for offline probes)")
    p.add_argument("--memory", type=Path, help="a citation-context memory (contexts.sqlite) each draft's library "
                   "starts from: `citefinder --library EMPTY contexts import PACK --split train`, then "
                   "EMPTY/contexts.sqlite (use another --libraries folder than the runs without it)")
    p.add_argument("--enrich-from", metavar="LIBRARY", help="enrich each draft's library from this literature "
                   "library folder (or source name) after its import, as `library enrich --from` does (libraries "
                   "of their own under --libraries)")
    p.add_argument("--out", type=Path)
    args = p.parse_args()

    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import evaluate_drafts

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    if args.papers:
        papers = args.papers.split(",")
    elif args.part == "all":
        papers = sorted(split["train"] + split["test"])
    else:
        papers = split[args.part]
    changes: dict[str, object] = {}
    if args.embedder:
        changes["embedder"] = args.embedder
    for name in ("query_encoder", "reranker", "rerank_top_n", "rerank_blend"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.agents:
        changes["agents"] = tuple(args.agents.split(","))
    if args.fusion:
        changes["fusion"] = args.fusion
    if args.threshold is not None:
        changes["confidence_threshold"] = args.threshold
    if args.second_paper:
        changes["second_paper"] = args.second_paper == "on"
    settings = Settings().with_overrides(**changes)
    source = None
    if args.enrich_from:
        from citefinder.sources.registry import open_source

        source = open_source(args.enrich_from, settings)
    result = evaluate_drafts(args.data, papers, settings, args.libraries, bib_name=args.bib, keep_traces=args.traces,
                             memory=args.memory, enrich_from=source,
                             progress=lambda name, n, total: print(f"[{n}/{total}] {name}", file=sys.stderr, flush=True))
    print(summary(result))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False))
    return 0


def summary(result: dict) -> str:
    lines = [f"{result['dataset']} ({result['bib']}): {len(result['papers'])} papers, {result['items']} slots",
             "| stage | hit@1 | hit@5 | hit@10 | mrr |", "|---|---|---|---|---|"]
    for stage, m in result["stages"].items():
        lines.append(f"| {stage} | {m.get('hit@1', 0):.3f} | {m.get('hit@5', 0):.3f} | {m.get('hit@10', 0):.3f} | "
                     f"{m.get('mrr', 0):.3f} |")
    if result.get("enriched"):
        found = sum(e["abstract_found"] for e in result["enriched"].values())
        have = sum(e["with_abstract"] for e in result["enriched"].values())
        total = sum(e["papers"] for e in result["enriched"].values())
        lines.append(f"enriched: {found} entries got an abstract; {have} of {total} library papers have one")
    outs = result["outcomes"]
    n = len(outs)
    picked = [o for o in outs if o["selected"]]
    right = [o for o in picked if o["selected"] in o["gold"]]
    lines.append(f"selector: filled {len(picked)}/{n} slots, right {len(right)} ({len(right) / max(1, n):.1%} of "
                 f"slots); precision of picks {len(right) / max(1, len(picked)):.1%}")
    if "sets" in result:
        lines += ["| answerable slots | slots | filled | exact set | any key | precision of papers |",
                  "|---|---|---|---|---|---|"]
        for name, m in result["sets"].items():
            lines.append(f"| {name} | {m['slots']} | {m['filled']} | {m['exact_set']:.3f} | {m['any_key']:.3f} | "
                         f"{m['precision']:.3f} ({m['papers_selected']} papers) |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
