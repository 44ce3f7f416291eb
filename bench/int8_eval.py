"""int8 against fp32 MiniLM in one run: papers/s on the same texts, cosine per text, and dense ranking
(exact search) on CiteME test, autoscholar-dev and drafts-dev test.

    nice -n 10 python bench/int8_eval.py --distractors 1000 --out bench/out/int8-eval.json

- **pool**: every gold paper of CiteME and autoscholar-dev that papers-50k holds, plus ``--distractors``
  papers of papers-50k drawn with seed 0 (``--autoscholar-items`` of autoscholar-dev drawn with seed 0) (title + abstract, as a library embeds them). Queries: each item's
  first slot -> reformulate -> the dense agent's text (``item_query``), embedded one at a time
  as the pipeline does.
- **drafts-dev test** (bench/drafts_split.json): each paper's slots against the entries of its own
  refs-enriched.bib (one corpus per paper; a slot's gold = the keys of gold.jsonl).
- **speed**: ``--speed-texts`` pool texts embedded by fp32 (torch, the default encoder), int8 and fp32 again,
  ``--rounds`` times alternating, all threads; the best round of each is the rate (a busy machine only slows
  a round down). The load average is recorded before and after.
- **rows**: fp32 docs + fp32 queries (today), int8 docs + int8 queries (an int8 library), fp32 docs + int8
  queries (an int8 query side over an fp32 library).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from common import emit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
DATA = ROOT.parent / "shared" / "data"


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def item_query(text: str) -> str:
    """The dense agent's text for a benchmark item: its first slot, else the whole text as a question."""
    from citefinder.retrieve.agents.dense import dense_text
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots

    slots = find_slots(text, 0)
    query, _ = reformulate(slots[0] if slots else text)
    return dense_text(query)


def pool(distractors: int, autoscholar_items: int) -> tuple[list[str], list[str], dict[str, list[tuple]]]:
    from citefinder.library.records import embedding_text
    from citefinder.types import Paper

    sets: dict[str, list[tuple]] = {}
    gold: set[str] = set()
    for name, file in (("citeme", "citeme.jsonl"), ("autoscholar-dev", "autoscholar-dev.jsonl")):
        items = [json.loads(line) for line in (DATA / file).open(encoding="utf-8")]
        if name == "autoscholar-dev":
            random.Random(0).shuffle(items)
            items = items[:autoscholar_items]
        for item in items:
            if not item.get("gold") or (name == "citeme" and item.get("split") != "test"):
                continue
            part = "citeme-test" if name == "citeme" else name
            sets.setdefault(part, []).append((item["id"], item_query(item["text"]), frozenset(item["gold"])))
            gold |= set(item["gold"])
    docs: dict[str, str] = {}
    rest = []
    with gzip.open(DATA / "papers-50k.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            text = embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or ""))
            if p["doc_id"] in gold:
                docs[p["doc_id"]] = text
            else:
                rest.append((p["doc_id"], text))
    random.Random(0).shuffle(rest)
    docs.update(rest[:distractors])
    for name in sets:
        sets[name] = [(q, t, g & docs.keys()) for q, t, g in sets[name] if g & docs.keys()]
    return list(docs), list(docs.values()), sets


def drafts(part: str, limit: int | None = None) -> list[tuple[str, list[str], list[str], list[tuple]]]:
    """Per draft: (name, entry keys, entry texts, [(slot id, query, gold keys)])."""
    from citefinder.library.formats.bib import read_bib
    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots
    from citefinder.types import Paper

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    out = []
    for name in split[part][:limit]:
        folder = DATA / "drafts-dev" / name
        entries = {p.key: embedding_text(p) for p in read_bib(folder / "refs-enriched.bib")
                   if isinstance(p, Paper) and p.key}
        slots = find_slots((folder / "draft.txt").read_text(encoding="utf-8"), 0)
        gold = [json.loads(x) for x in (folder / "gold.jsonl").read_text().splitlines() if x.strip()]
        queries = []
        for slot, g in zip(slots, gold, strict=False):
            keys = frozenset(k for k in g["keys"] if k in entries)
            if keys:
                queries.append((f"{name}:{g['slot']}", dense_text(reformulate(slot)[0]), keys))
        out.append((name, list(entries), list(entries.values()), queries))
    return out


def metrics(qvecs: np.ndarray, dvecs: np.ndarray, ids: list[str], queries: list[tuple]) -> dict[str, float]:
    rr, h10, h100 = [], [], []
    sims = qvecs @ dvecs.T
    for row, (_, _, gold) in enumerate(queries):
        order = np.lexsort((np.arange(len(ids)), -sims[row]))
        ranks = [r for r, j in enumerate(order[:100], start=1) if ids[j] in gold]
        first = ranks[0] if ranks else None
        rr.append(1.0 / first if first else 0.0)
        h10.append(1.0 if first and first <= 10 else 0.0)
        h100.append(1.0 if first else 0.0)
    n = max(1, len(queries))
    return {"queries": len(queries), "R@10": round(sum(h10) / n, 4), "R@100": round(sum(h100) / n, 4),
            "MRR": round(sum(rr) / n, 4)}


def one_by_one(embedder, texts: list[str]) -> np.ndarray:
    return np.vstack([embedder.encode([t]) for t in texts]) if texts else np.zeros((0, 384), np.float32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--distractors", type=int, default=1000)
    ap.add_argument("--autoscholar-items", type=int, default=150, help="autoscholar-dev items drawn (seed 0)")
    ap.add_argument("--speed-texts", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--no-drafts", action="store_true")
    ap.add_argument("--drafts-papers", type=int, default=None, help="only the first N drafts-dev test papers")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from citefinder.config import offline_environment
    from citefinder.library.encoders.embedder import MINILM, MINILM_INT8, Embedder

    offline_environment()
    encoders = {"fp32": Embedder(MINILM, 256, args.batch_size), "int8": Embedder(MINILM_INT8, 256, args.batch_size)}
    for e in encoders.values():
        e.encode(["warm up", "the encoder"] * 5)
    ids, texts, sets = pool(args.distractors, args.autoscholar_items)
    _log(f"pool {len(ids)} papers; " + ", ".join(f"{k} {len(v)}" for k, v in sets.items()))
    report: dict = {"pool": len(ids), "distractors": args.distractors, "cores": os.cpu_count(),
                    "threads": os.environ.get("OMP_NUM_THREADS", "all"), "load_before": os.getloadavg()}

    speed_texts = texts[len(texts) - args.speed_texts:] if args.speed_texts < len(texts) else texts
    rounds: dict[str, list[float]] = {"fp32": [], "int8": []}
    for _ in range(args.rounds):
        for name in ("fp32", "int8"):
            start = time.perf_counter()
            encoders[name].encode(speed_texts)
            rounds[name].append(len(speed_texts) / (time.perf_counter() - start))
            _log(f"{name}: {rounds[name][-1]:.1f} papers/s")
    report["speed"] = {"texts": len(speed_texts), "rounds": {k: [round(x, 1) for x in v] for k, v in rounds.items()},
                       "best": {k: round(max(v), 1) for k, v in rounds.items()},
                       "ratio_best": round(max(rounds["int8"]) / max(rounds["fp32"]), 2)}

    dvec = {name: e.encode(texts) for name, e in encoders.items()}
    cos = (dvec["fp32"] * dvec["int8"]).sum(1)
    report["cosine_per_text"] = {"min": round(float(cos.min()), 4), "p1": round(float(np.percentile(cos, 1)), 4),
                                 "p5": round(float(np.percentile(cos, 5)), 4), "mean": round(float(cos.mean()), 4)}
    _log(f"cosine {report['cosine_per_text']}")
    rows: dict[str, dict] = {"fp32": {}, "int8": {}, "fp32 docs + int8 queries": {}}
    for set_name, queries in sets.items():
        q = {name: one_by_one(e, [t for _, t, _ in queries]) for name, e in encoders.items()}
        rows["fp32"][set_name] = metrics(q["fp32"], dvec["fp32"], ids, queries)
        rows["int8"][set_name] = metrics(q["int8"], dvec["int8"], ids, queries)
        rows["fp32 docs + int8 queries"][set_name] = metrics(q["int8"], dvec["fp32"], ids, queries)
        _log(f"{set_name}: " + json.dumps({k: v[set_name] for k, v in rows.items()}))
    if not args.no_drafts:
        per: dict[str, list] = {k: [] for k in rows}
        for name, keys, entry_texts, queries in drafts("test", args.drafts_papers):
            d = {n: e.encode(entry_texts) for n, e in encoders.items()}
            q = {n: one_by_one(e, [t for _, t, _ in queries]) for n, e in encoders.items()}
            for row, (qn, dn) in {"fp32": ("fp32", "fp32"), "int8": ("int8", "int8"),
                                  "fp32 docs + int8 queries": ("int8", "fp32")}.items():
                m = metrics(q[qn], d[dn], keys, queries)
                per[row].append(m)
        for row, ms in per.items():
            n = sum(m["queries"] for m in ms)
            rows[row]["drafts-dev-test"] = {"queries": n, **{k: round(sum(m[k] * m["queries"] for m in ms) / max(1, n), 4)
                                                             for k in ("R@10", "R@100", "MRR")}}
        _log("drafts-dev-test: " + json.dumps({k: v["drafts-dev-test"] for k, v in rows.items()}))
    report["dense"] = rows
    report["mrr_delta_int8"] = {s: round(rows["int8"][s]["MRR"] - rows["fp32"][s]["MRR"], 4) for s in rows["fp32"]}
    report["mrr_delta_int8_queries"] = {s: round(rows["fp32 docs + int8 queries"][s]["MRR"] - rows["fp32"][s]["MRR"], 4)
                                        for s in rows["fp32"]}
    report["load_after"] = os.getloadavg()
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
