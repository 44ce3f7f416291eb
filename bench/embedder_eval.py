"""Dense-only recall of candidate embedders, cheapest measures first (no library is written).

    OMP_NUM_THREADS=1 python bench/embedder_eval.py --embedders minilm,/path/to/minilm-onnx,/path/to/trained \\
        --out bench/out/embedder-eval.json

Two corpora, each embedded once per embedder, searched exactly (cosine):

- **sub-library**: every gold paper of CiteME and autoscholar-dev found in papers-50k (as
  `bench/probes/sublibrary.py`), every paper a pack *test* sentence cites that papers-333k holds
  (title + abstract), and ``--distractors`` seeded papers of papers-50k. Queries: CiteME train / test
  excerpts and autoscholar-dev questions, built as the pipeline builds them (first slot -> reformulate ->
  the dense agent's text), and the pack's test sentences whose cited paper has a doc_id.
- **pack test (all)**: every pack test sentence against every paper the test split cites (titles only
  where no abstract is known) plus ``--pack-distractors`` papers cited in the train split: the same shape
  as the training command's validation, on the test split.

Metrics per set: hit@1/10/100 and MRR (a slot with several gold papers is hit by any). The test parts
(CiteME test, pack test) are for the report only: nothing is tuned on them.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
from common import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
PACK = DATA / "cite-contexts" / "contexts.jsonl.gz"


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


def sub_library(distractors: int, test_pairs: list) -> tuple[list[str], list[str], dict[str, list[tuple]]]:
    """(doc ids, texts, {set name: [(qid, query, gold)]}) of the sub-library."""
    from citefinder.library.records import embedding_text
    from citefinder.train.embedder.pack import load_abstracts
    from citefinder.types import Paper

    sets: dict[str, list[tuple]] = {}
    gold: set[str] = set()
    for name, file in (("citeme", "citeme.jsonl"), ("autoscholar", "autoscholar-dev.jsonl")):
        for line in (DATA / file).open(encoding="utf-8"):
            item = json.loads(line)
            if not item.get("gold"):
                continue
            part = f"{name}-{item['split']}" if item.get("split") else name
            sets.setdefault(part, []).append((item["id"], item_query(item["text"]), frozenset(item["gold"])))
            gold |= set(item["gold"])
    papers = [json.loads(line) for line in gzip.open(DATA / "papers-50k.jsonl.gz", "rt", encoding="utf-8")]
    docs = {p["doc_id"]: embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or ""))
            for p in papers if p["doc_id"] in gold}
    with_id = [p for p in test_pairs if not p.doc.startswith("title:")]
    found = load_abstracts(DATA / "papers-333k.jsonl.gz", {p.doc for p in with_id})
    for doc, (title, abstract) in found.items():
        docs.setdefault(doc, embedding_text(Paper(doc, title, abstract=abstract)))
    sets["pack-test-docid"] = [(p.id, p.query, frozenset(g for g in p.gold if g in docs)) for p in with_id
                               if p.doc in docs]
    rest = [p for p in papers if p["doc_id"] not in docs]
    random.Random(0).shuffle(rest)
    for p in rest[:distractors]:
        docs[p["doc_id"]] = embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or ""))
    return list(docs), list(docs.values()), sets


def cached_encode(embedder, texts: list[str], cache: Path) -> tuple[np.ndarray, float]:
    """Vectors of ``texts`` (from the cache when this embedder already embedded exactly these), docs/s."""
    key = hashlib.sha1(("\n".join(texts) + f"|{embedder.name}|{embedder.max_seq_length}").encode()).hexdigest()[:16]
    file = cache / f"{key}.npy"
    if file.exists():
        return np.load(file), float("nan")
    start = time.perf_counter()
    vecs = embedder.encode(texts)
    rate = len(texts) / (time.perf_counter() - start)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(file, vecs)
    return vecs, rate


def search(qvecs: np.ndarray, dvecs: np.ndarray, ids: list[str], queries: list[tuple]) -> dict:
    from citefinder.evaluate.metrics import evaluate_run

    run: dict[str, dict[str, float]] = {}
    for lo in range(0, len(queries), 512):
        sims = qvecs[lo:lo + 512] @ dvecs.T
        top = np.argsort(-sims, axis=1)[:, :100]
        for row, (qid, _, _) in enumerate(queries[lo:lo + 512]):
            run[qid] = {ids[j]: float(sims[row, j]) for j in top[row]}
    m = evaluate_run({q: {d: 1 for d in g} for q, _, g in queries}, run, ks=(1, 10, 100))
    return {"queries": int(m["queries"]), **{k: round(m[k], 4) for k in ("hit@1", "hit@10", "hit@100", "mrr")}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedders", default="minilm", help="comma-separated: minilm, mpnet, folders")
    ap.add_argument("--distractors", type=int, default=2000)
    ap.add_argument("--pack-distractors", type=int, default=5000)
    ap.add_argument("--max-seq-length", type=int, default=256)
    ap.add_argument("--cache", type=Path, default=ROOT / "bench/out/embcache")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from citefinder.config import offline_environment
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.train.embedder.pack import load_pairs
    from citefinder.train.embedder.validate import held_out_set

    offline_environment()
    _log("reading the pack")
    test_pairs = load_pairs([PACK], split="test", papers=DATA / "papers-333k.jsonl.gz")
    train_pairs = load_pairs([PACK], split="train")
    pack = held_out_set(test_pairs, train_pairs, max_queries=None, distractors=args.pack_distractors, seed=0)
    _log("building the sub-library")
    ids, texts, sets = sub_library(args.distractors, test_pairs)
    _log(f"sub-library {len(ids)} papers; pack corpus {len(pack.corpus_ids)}; sets "
         + ", ".join(f"{k} {len(v)}" for k, v in sets.items()) + f", pack-test {len(pack.queries)}")
    report: dict = {"sub_library_papers": len(ids), "pack_corpus": len(pack.corpus_ids),
                    "threads": os.environ.get("OMP_NUM_THREADS", "all"), "embedders": {}}
    for name in args.embedders.split(","):
        emb = Embedder(name, max_seq_length=args.max_seq_length, batch_size=32)
        emb.encode(["warm up"])
        _log(f"{name}: embedding the sub-library")
        dvecs, rate = cached_encode(emb, texts, args.cache)
        row: dict = {"sub_library_docs_per_s": round(rate, 1)}
        for set_name, queries in sets.items():
            qvecs = emb.encode([q for _, q, _ in queries])
            row[set_name] = search(qvecs, dvecs, ids, queries)
        _log(f"{name}: embedding the pack corpus")
        pvecs, prate = cached_encode(emb, list(pack.corpus_texts), args.cache)
        row["pack_docs_per_s"] = round(prate, 1)
        row["pack-test"] = search(emb.encode([q for _, q, _ in pack.queries]), pvecs, list(pack.corpus_ids),
                                  list(pack.queries))
        report["embedders"][name] = row
        _log(json.dumps({name: row}))
    write_json(args.out, report, indent=2)
    print(table(report))
    return 0


def table(report: dict) -> str:
    first = next(iter(report["embedders"].values()))
    sets = [k for k, v in first.items() if isinstance(v, dict)]
    lines = ["| embedder | set | n | hit@1 | hit@10 | hit@100 | MRR |", "|---|---|---|---|---|---|---|"]
    for name, row in report["embedders"].items():
        for s in sets:
            m = row[s]
            lines.append(f"| {Path(name).name} | {s} | {m['queries']} | {m['hit@1']:.3f} | {m['hit@10']:.3f} | "
                         f"{m['hit@100']:.3f} | {m['mrr']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
