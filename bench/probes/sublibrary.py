"""The shared helper of the probes behind bench/RESULTS.md, section "Import of papers-50k (`bench/bench_import.py`)".

The dense-only benchmark shared by `seq_length.py` and `static_tier.py`.

A sub-library of every gold paper of autoscholar-dev and CiteME found in papers-50k plus seeded
random distractors, embedded once per embedder; queries are scored by exact cosine search.
"""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from citefinder.evaluate.metrics import evaluate_run
from citefinder.library.records import embedding_text
from citefinder.types import Paper

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def load_sets(data: Path = DATA) -> dict[str, list[dict]]:
    return {name: [json.loads(line) for line in (data / f).open()] for name, f in
            (("autoscholar", "autoscholar-dev.jsonl"), ("citeme", "citeme.jsonl"))}


def load_papers(data: Path = DATA) -> list[dict]:
    return [json.loads(line) for line in gzip.open(data / "papers-50k.jsonl.gz", "rt")]


def sub_library(papers: list[dict], sets: dict[str, list[dict]], distractors: int) -> tuple[list[str], list[str]]:
    """(doc ids, embedding texts) of every gold paper plus ``distractors`` seeded random others."""
    gold = {g for items in sets.values() for i in items for g in i["gold"]}
    keep = [p for p in papers if p["doc_id"] in gold]
    rest = [p for p in papers if p["doc_id"] not in gold]
    random.Random(0).shuffle(rest)
    keep += rest[:distractors]
    texts = [embedding_text(Paper(p["doc_id"], p["title"], abstract=p.get("abstract") or "")) for p in keep]
    return [p["doc_id"] for p in keep], texts


def dense_quality(emb, texts: list[str], ids: list[str], sets: dict[str, list[dict]]) -> dict:
    """Embedding speed (papers/s) and exact-search recall per query set for one embedder."""
    emb.encode(["warm up"])
    t = time.perf_counter()
    docs = emb.encode(texts)
    row: dict = {"papers_per_s": round(len(texts) / (time.perf_counter() - t), 1)}
    for name, items in sets.items():
        items = [i for i in items if i["gold"]]
        q = emb.encode([i["text"].replace("[CITATIONS]", "").replace("[CITATION]", "") for i in items])
        sims = q @ docs.T
        top = np.argsort(-sims, axis=1)[:, :100]
        run = {i["id"]: {ids[j]: float(sims[n, j]) for j in top[n]} for n, i in enumerate(items)}
        qrels = {i["id"]: {g: 1 for g in i["gold"]} for i in items}
        row[name] = {k: round(v, 4) for k, v in evaluate_run(qrels, run).items()}
    return row
