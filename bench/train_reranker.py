"""Train our own cross-encoder on the benchmark data and measure it honestly against the fused order.

Data (../shared/data): AutoScholarQuery dev split by query (seeded) into a training part and a
validation part, plus the CiteME ``train`` split for training; reported on the validation part and
on the CiteME ``test`` split (answerable excerpts), never trained on. Hard negatives are mined from
the library (opened read-only: nothing is written into it). Per stage: recall@5/10, MRR, top-1 for
bm25, dense, fused (no reranking) and reranked at top-N = 20, 50, 100; rerank latency per slot for
each N on a seeded sample of queries.

Usage:
    python bench/train_reranker.py --library /work/bench-libs/lib50k \\
        --model /work/bench-libs/rerankers/ce-minilm-bench --out bench/out/reranker.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

from citefinder.config import Settings, offline_environment

ROOT = Path(__file__).resolve().parent.parent
TOP_NS = (20, 50, 100)


def _bar(desc: str, total: int):
    from tqdm import tqdm

    return tqdm(desc=desc, total=total, file=sys.stderr, dynamic_ncols=True, mininterval=5)


def stage_rankings(library, item) -> dict[str, list[str]]:
    """bm25, dense and fused rankings of one item, as the pipeline builds them."""
    from citefinder.rank.fuse import fuse, fusion_of
    from citefinder.retrieve.base import retrieve
    from citefinder.retrieve.registry import make_agents
    from citefinder.train.rerank.mining import example_query

    s = library.settings
    query = example_query(item, s.context_sentences)
    rankings, _ = retrieve(make_agents(s, library), query)
    out: dict[str, object] = {"query": query.text}
    out.update({name: [h.doc_id for h in hits] for name, hits in rankings.items()})
    out["fused"] = [d for d, _ in fuse(rankings, fusion_of(s))]
    return out  # type: ignore[return-value]


def pseudo_items(papers_path: Path, exclude: set[str], n: int, seed: int):
    """``n`` pseudo citation contexts from library papers that no benchmark cites (inverse cloze task).

    One sentence of a paper's abstract, written in the third person, becomes a one-slot context
    ("... they show X [CITATION].") whose gold is that paper; the sentence is removed from the
    positive's abstract after mining so the model cannot match it verbatim (Lee et al. 2019).
    Returns the items and ``{item id: removed sentence}``.
    """
    import gzip
    import random
    import re

    from citefinder.evaluate.dataset import EvalItem

    sentence_split = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
    rng = random.Random(seed)
    pool = []
    with gzip.open(papers_path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["doc_id"] in exclude:
                continue
            sentences = [x for x in sentence_split.split(r.get("abstract") or "") if 60 <= len(x) <= 300]
            if len(sentences) >= 3:
                pool.append((r["doc_id"], sentences))
    items, removed = [], {}
    for doc_id, sentences in rng.sample(pool, min(n, len(pool))):
        sentence = rng.choice(sentences[1:])
        text = re.sub(r"\b[Ww]e\b", "they", re.sub(r"\b[Oo]ur\b", "their", sentence)).rstrip(" .")
        text = text[:1].upper() + text[1:]
        item_id = f"pseudo:{doc_id}"
        items.append(EvalItem(item_id, f"{text} [CITATION].", (doc_id,)))
        removed[item_id] = sentence
    return items, removed


def without_sentences(mined, removed: dict[str, str]):
    """Mined queries whose pseudo positives lost the sentence their query was made from."""
    from dataclasses import replace

    out = []
    for q in mined:
        sentence = removed.get(q.id)
        if sentence:
            q = replace(q, positives=tuple(replace(p, abstract=p.abstract.replace(sentence, " ").strip())
                                          for p in q.positives))
        out.append(q)
    return out


def evaluate_split(name, items, library, reranker, *, top_ns, sample_latency: int) -> dict:
    from citefinder.train.rerank.mining import MinedQuery
    from citefinder.train.rerank.validate import (
        blended_order,
        rerank_latency,
        rerank_scores,
        reranked_order,
        summarize,
    )

    t0 = time.perf_counter()
    mined, stages = [], {}
    bar = _bar(f"retrieving {name}", len(items))
    for item in items:
        positives = tuple(library.get(list(item.gold)))
        if not positives:
            continue
        r = stage_rankings(library, item)
        stages[item.id] = r
        keep = max(*top_ns, *(TOP_NS if sample_latency else ()))  # latency is timed at every N in TOP_NS
        mined.append(MinedQuery(item.id, r["query"], positives, (), tuple(r["fused"][:keep])))
        bar.update(1)
    bar.close()
    retrieve_s = time.perf_counter() - t0
    qrels = {q.id: {p.doc_id: 1 for p in q.positives} for q in mined}
    table = {stage: summarize(qrels, {q: stages[q][stage] for q in qrels}) for stage in ("bm25", "dense", "fused")}
    t0 = time.perf_counter()
    bar = _bar(f"reranking {name}", len(mined))
    scores = rerank_scores(reranker, library, mined, max(top_ns), progress=lambda d, t: bar.update(d - bar.n))
    bar.close()
    rerank_s = time.perf_counter() - t0
    for n in top_ns:
        table[f"reranked@{n}"] = summarize(
            qrels, {q.id: reranked_order(stages[q.id]["fused"], scores[q.id], n) for q in mined}
        )
        table[f"blended@{n}"] = summarize(
            qrels, {q.id: blended_order(stages[q.id]["fused"], scores[q.id], n) for q in mined}
        )
    latency = rerank_latency(reranker, library, mined, TOP_NS, sample=sample_latency) if sample_latency else {}
    # the scores do not depend on N; the same pairs are scored once per query
    return {"queries": len(mined), "stages": table, "latency": latency,
            "scores": {q.id: {"fused": stages[q.id]["fused"][: max(top_ns)], "rerank": scores[q.id]} for q in mined},
            "retrieve_s": round(retrieve_s, 1), "rerank_all_s": round(rerank_s, 1)}


def main() -> None:
    from citefinder.cli.reranker import split_by_query
    from citefinder.train.rerank.train import TrainConfig

    d = TrainConfig()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", type=Path, required=True, help="library to mine from (opened read-only)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, required=True, help="folder to save the trained model (outside the repo)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "reranker.json")
    ap.add_argument("--val-fraction", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--epochs", type=int, default=d.epochs)
    ap.add_argument("--batch-size", type=int, default=d.batch_size)
    ap.add_argument("--max-length", type=int, default=d.max_length)
    ap.add_argument("--lr", type=float, default=d.learning_rate)
    ap.add_argument("--negatives", type=int, default=d.negatives)
    ap.add_argument("--loss", choices=("listwise", "bce"), default=d.loss)
    ap.add_argument("--depth", type=int, default=50, help="fused depth negatives are sampled from")
    ap.add_argument("--positive-depth", type=int, default=100, help="gold ranked below this is not a positive; 0 = all")
    ap.add_argument("--limit-train", type=int, help="train on the first N training queries only (smoke runs)")
    ap.add_argument("--limit-eval", type=int, help="evaluate the first N queries of each split only (smoke runs)")
    ap.add_argument("--latency-sample", type=int, default=20, help="queries timed per N (20, 50, 100)")
    ap.add_argument("--top-ns", default="20,50,100", help="rerank depths whose quality is measured")
    ap.add_argument("--skip-train", action="store_true", help="evaluate an already trained --model")
    ap.add_argument("--pseudo", type=int, default=0,
                    help="add N pseudo citation contexts (inverse cloze) from library papers no benchmark cites")
    args = ap.parse_args()
    offline_environment()

    import torch

    from citefinder.library.store import Library
    from citefinder.rank.rerank import CrossEncoderReranker
    from citefinder.train.examples import load_examples
    from citefinder.train.rerank.card import update_card
    from citefinder.train.rerank.mining import mine_hard_negatives
    from citefinder.train.rerank.train import train_cross_encoder
    from citefinder.train.rerank.validate import reranker_wins

    autoscholar = args.data / "autoscholar-dev.jsonl"
    citeme = args.data / "citeme.jsonl"
    train_as, val_as = split_by_query(load_examples([autoscholar]), args.val_fraction, args.seed)
    train_items = train_as + load_examples([citeme], split="train")
    test_items = load_examples([citeme], split="test")
    assert not {i.id for i in train_items} & ({i.id for i in val_as} | {i.id for i in test_items})
    if args.limit_train:
        train_items = train_items[: args.limit_train]
    removed: dict[str, str] = {}
    if args.pseudo:
        every_gold = {g for i in load_examples([autoscholar, citeme]) for g in i.gold}
        pseudo, removed = pseudo_items(args.data / "papers-50k.jsonl.gz", every_gold, args.pseudo, args.seed)
        train_items = train_items + pseudo
    if args.limit_eval:
        val_as, test_items = val_as[: args.limit_eval], test_items[: args.limit_eval]

    settings = Settings(library=args.library)
    library = Library.open(settings)
    config = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, max_length=args.max_length,
                         learning_rate=args.lr, negatives=args.negatives, loss=args.loss, seed=args.seed)
    result: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "load_avg_start": os.getloadavg()},
        "library": {"path": str(args.library), "papers": library.count()},
        "data": {"train_queries": len(train_items), "validation_queries": len(val_as),
                 "citeme_test_queries": len(test_items), "split_seed": args.seed, "val_fraction": args.val_fraction},
        "config": {**config.to_dict(), "depth": args.depth, "positive_depth": args.positive_depth,
                   "pseudo": args.pseudo},
        "model": str(args.model),
    }
    if not args.skip_train:
        bar = _bar("mining", len(train_items))
        mined, report = mine_hard_negatives(library, train_items, negatives=config.negatives, depth=args.depth,
                                            positive_depth=args.positive_depth or None, seed=config.seed,
                                            progress=lambda d, t: bar.update(d - bar.n))
        bar.close()
        mined = without_sentences(mined, removed)
        result["mining"] = report.to_dict()
        print(f"mined: {report.to_dict()}", file=sys.stderr)
        bar = _bar("training", 1)

        def on_step(p) -> None:
            bar.total = p.total
            bar.set_postfix(loss=f"{p.loss:.3f}", refresh=False)
            bar.update(p.step - bar.n)

        sources = [f"{autoscholar.name} (train part, seed {args.seed})", f"{citeme.name} (train split)"]
        if args.pseudo:
            sources.append(f"{args.pseudo} pseudo contexts (inverse cloze) from papers-50k papers no benchmark cites")
        card = {"data": {"sources": sources,
                         "train_queries": report.mined},
                "library": {"path": str(args.library), "papers": library.count(), "embedder": library.embedder.name}}
        trained = train_cross_encoder(mined, args.model, config, card=card, progress=on_step)
        bar.close()
        result["training"] = {"pairs": trained.pairs, "positives": trained.positives, "steps": trained.steps,
                              "train_s": round(trained.elapsed_s, 1), "epoch_loss": trained.epoch_loss}
        print(f"trained: {result['training']}", file=sys.stderr)

    reranker = CrossEncoderReranker(str(args.model), label=args.model.name, blend="replace")  # raw scores
    top_ns = tuple(int(n) for n in args.top_ns.split(","))
    result["validation"] = evaluate_split("autoscholar validation", val_as, library, reranker, top_ns=top_ns,
                                          sample_latency=args.latency_sample)
    result["citeme_test"] = evaluate_split("citeme test", test_items, library, reranker, top_ns=top_ns,
                                           sample_latency=0)
    result["wins"] = {str(n): {"validation": reranker_wins(result["validation"]["stages"], n),
                               "citeme_test": reranker_wins(result["citeme_test"]["stages"], n)} for n in top_ns}
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result["machine"]["load_avg_end"] = os.getloadavg()
    update_card(args.model, metrics={"autoscholar_validation": result["validation"]["stages"],
                                     "citeme_test": result["citeme_test"]["stages"]})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(markdown(result))


def markdown(result: dict) -> str:
    """The tables for bench/RESULTS-reranker.md."""
    lines = []
    for split in ("validation", "citeme_test"):
        r = result[split]
        lines += [f"\n{split} ({r['queries']} queries)\n", "| stage | recall@5 | recall@10 | MRR | top-1 |",
                  "|---|---|---|---|---|"]
        for stage, m in r["stages"].items():
            lines.append(f"| {stage} | {m['recall@5']:.3f} | {m['recall@10']:.3f} | {m['mrr']:.3f} | {m['top1']:.3f} |")
    lat = result["validation"].get("latency") or {}
    if lat:
        lines += ["\n| top-N | rerank p50 s/slot | mean | max |", "|---|---|---|---|"]
        lines += [f"| {n} | {v['p50_s']:.2f} | {v['mean_s']:.2f} | {v['max_s']:.2f} |" for n, v in lat.items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
