"""Ablations and confidence calibration from saved `citefinder eval --out` results (no re-retrieval).

The eval results keep every item's BM25 and dense lists (with scores) in its traces, so fusion
method, RRF k and candidate depth can be varied offline. The no-LLM selector's confidence rules
are compared on a calibration set (never the items reported as test).

Usage:
  python bench/ablate.py fusion RESULTS.json [RESULTS2.json ...]
  python bench/ablate.py confidence --calibrate CAL.json [CAL2.json ...] --report TEST.json
  python bench/ablate.py context RESULTS_CONTEXT0.json RESULTS_CONTEXT1.json ...

(Per-agent ablations of the learned fusion: ``bench/tune.py ablate``.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from citefinder.evaluate.metrics import evaluate_run
from citefinder.rank.fuse import fuse
from citefinder.types import Hit

RRF_KS = (1, 10, 30, 60, 100, 300)
DEPTHS = (10, 20, 50, 100)


def lists_of(outcome: dict[str, Any], depth: int = 100) -> dict[str, tuple[Hit, ...]]:
    traces = {t["agent"]: t for t in outcome["result"]["traces"]}
    return {name: tuple(Hit(h["doc_id"], h["rank"], h["score"]) for h in traces[name]["top"][:depth])
            for name in ("bm25", "dense") if name in traces and traces[name]["top"]}


def fused_metrics(outcomes: list[dict[str, Any]], method: str, k: int, depth: int) -> dict[str, float]:
    qrels = {o["id"]: {g: 1 for g in o["gold"]} for o in outcomes if o["answerable"]}
    run = {}
    for o in outcomes:
        fused = fuse(lists_of(o, depth), method, k)  # type: ignore[arg-type]
        run[o["id"]] = {d: 1.0 / i for i, (d, _s) in enumerate(fused, start=1)}
    return evaluate_run(qrels, run)


def cmd_fusion(paths: list[Path]) -> None:
    for path in paths:
        res = json.loads(path.read_text())
        outs = res["outcomes"]
        print(f"\n### {res['dataset']} ({len(outs)} items, {res['library']['papers']} papers)\n")
        print("| variant | R@1 | R@5 | R@10 | R@20 | R@100 | MRR | nDCG@10 |\n|---|---|---|---|---|---|---|---|")
        rows: list[tuple[str, dict[str, float]]] = []
        for name in ("bm25", "dense"):
            qrels = {o["id"]: {g: 1 for g in o["gold"]} for o in outs if o["answerable"]}
            run = {o["id"]: {h.doc_id: 1.0 / h.rank for h in lists_of(o).get(name, ())} for o in outs}
            rows.append((f"{name} only", evaluate_run(qrels, run)))
        rows += [(f"rrf k={k}", fused_metrics(outs, "rrf", k, 100)) for k in RRF_KS]
        rows.append(("max-score", fused_metrics(outs, "max", 60, 100)))
        rows += [(f"rrf k=60, depth {d}", fused_metrics(outs, "rrf", 60, d)) for d in DEPTHS]
        for name, m in rows:
            print(f"| {name} | " + " | ".join(f"{m[x]:.3f}" for x in
                  ("recall@1", "recall@5", "recall@10", "recall@20", "recall@100", "mrr", "ndcg@10")) + " |")


def cmd_context(paths: list[Path]) -> None:
    """Per-stage quality of eval results that differ in ``context_sentences`` (one row per stage and file)."""
    print("| context sentences | stage | R@1 | R@5 | R@10 | R@100 | MRR |\n|---|---|---|---|---|---|---|")
    for path in paths:
        res = json.loads(path.read_text())
        n = res["settings"]["context_sentences"]
        for stage in ("bm25", "dense", "fused"):
            m = res["stages"][stage]
            print(f"| {n} | {stage} | " + " | ".join(f"{m[x]:.3f}" for x in
                  ("recall@1", "recall@5", "recall@10", "recall@100", "mrr")) + " |")


# --- confidence of the no-LLM selector --------------------------------------------------------

def features(o: dict[str, Any], k: int = 60) -> dict[str, float] | None:
    lists = lists_of(o)
    fused = fuse(lists, "rrf", k)
    if not fused:
        return None
    top, score = fused[0]
    dense = {h.doc_id: h for h in lists.get("dense", ())}
    bm25 = lists.get("bm25", ())
    dl = lists.get("dense", ())
    cos = dense[top].score if top in dense else 0.0
    margin = (dl[0].score - dl[1].score) if len(dl) > 1 and dl[0].doc_id == top else 0.0
    return {
        "rrf": score / (len(lists) / (k + 1)),
        "dense_cosine": cos,
        "agreement": float(bool(bm25) and bool(dl) and bm25[0].doc_id == dl[0].doc_id == top),
        "cosine_x_agreement": cos * (1.0 if bm25 and bm25[0].doc_id == top else 0.7),
        "dense_margin": margin,
        "_correct": float(top in o["gold"]),
        "_answerable": float(o["answerable"]),
    }


def quality(rows: list[dict[str, float]], feat: str, th: float) -> dict[str, float]:
    """Select the top-1 when feature >= th. Positive class: the top-1 is a correct citation."""
    picked = [r for r in rows if r[feat] >= th]
    tp = sum(r["_correct"] for r in picked)
    pos = sum(r["_correct"] for r in rows)
    precision = tp / len(picked) if picked else 0.0
    recall = tp / pos if pos else 0.0
    ans = [r for r in rows if r["_answerable"]]
    una = [r for r in rows if not r["_answerable"]]
    return {
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "precision": precision,
        "top1_accuracy": sum(r["_correct"] for r in ans if r[feat] >= th) / len(ans) if ans else 0.0,
        "abstention_rate": sum(1 for r in una if r[feat] < th) / len(una) if una else 0.0,
    }


def auc(rows: list[dict[str, float]], feat: str) -> float:
    """P(feature of a correct top-1 > feature of a wrong one), ties count half (Mann-Whitney)."""
    pos = [r[feat] for r in rows if r["_correct"]]
    neg = [r[feat] for r in rows if not r["_correct"]]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def cmd_confidence(calibrate: list[Path], report: list[Path]) -> None:
    def rows_of(paths: list[Path]) -> list[dict[str, float]]:
        out = []
        for p in paths:
            for o in json.loads(p.read_text())["outcomes"]:
                f = features(o)
                if f is not None:
                    out.append(f)
        return out

    cal = rows_of(calibrate)
    test = rows_of(report)
    print(f"calibration items: {len(cal)}; report items: {len(test)}; "
          f"top-1 correct: {sum(r['_correct'] for r in cal):.0f} (cal.), {sum(r['_correct'] for r in test):.0f} (report)")
    print("| rule | AUC cal. | AUC report | threshold (max F1 on cal.) | report: precision of picks | "
          "report: top-1 acc. (answerable) | report: abstention (unanswerable) |")
    print("|---|---|---|---|---|---|---|")
    for feat in ("rrf", "dense_cosine", "agreement", "cosine_x_agreement", "dense_margin"):
        grid = sorted({round(r[feat], 3) for r in cal} | {0.0})
        best = max(grid, key=lambda th: (quality(cal, feat, th)["f1"], th))
        t = quality(test, feat, best)
        print(f"| {feat} | {auc(cal, feat):.3f} | {auc(test, feat):.3f} | {best:.3f} | {t['precision']:.3f} | "
              f"{t['top1_accuracy']:.3f} | {t['abstention_rate']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fusion")
    f.add_argument("results", type=Path, nargs="+")
    c = sub.add_parser("confidence")
    c.add_argument("--calibrate", type=Path, nargs="+", required=True)
    c.add_argument("--report", type=Path, nargs="+", required=True)
    x = sub.add_parser("context")
    x.add_argument("results", type=Path, nargs="+")
    args = ap.parse_args()
    if args.cmd == "context":
        cmd_context(args.results)
    elif args.cmd == "fusion":
        cmd_fusion(args.results)
    else:
        cmd_confidence(args.calibrate, args.report)


if __name__ == "__main__":
    main()
