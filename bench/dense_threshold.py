"""Exact dense search against Chroma's HNSW, by library size: where does exact stop being faster?

    nice -n 10 python bench/dense_threshold.py --sizes 10000,50000,200000,333568 --out bench/out/dense-threshold.json
    python bench/dense_threshold.py --vectors LIBRARY/.../vectors.npy ...   # a real library's matrix

Per size: the first N rows of ``--vectors`` (a library's saved matrix, index/vectors.py) or N seeded random
unit vectors of 384 dims; 30 queries (rows of the matrix plus noise). Exact: the dense agent's
``VectorMatrix.search`` (k=100), per query p50 / p95. HNSW: a Chroma collection in a temporary folder with
the library's configuration (cosine, ef_search 256), the add timed (the index build), then the same
queries: p50 / p95 and recall@100 against exact. The threshold to set (``exact_dense_max``) is the largest
size at which exact's p95 is below HNSW's; random vectors have no cluster structure, so HNSW's recall on
them is a lower bound.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import emit

ROOT = Path(__file__).resolve().parents[1]


def _pcts(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(xs, 50)) * 1000, 2), "p95_ms": round(float(np.percentile(xs, 95)) * 1000, 2)}


def measure(matrix: np.ndarray, queries: np.ndarray, hnsw: bool) -> dict:
    from citefinder.index.vectors import VectorMatrix
    from citefinder.library.store.chroma import HNSW_EF_SEARCH

    ids = tuple(f"d{i}" for i in range(len(matrix)))
    exact = VectorMatrix(ids, matrix)
    times, truth = [], []
    for q in queries:
        t = time.perf_counter()
        hits = exact.search(q, 100)
        times.append(time.perf_counter() - t)
        truth.append({h.doc_id for h in hits})
    row: dict = {"n": len(matrix), "exact": _pcts(times), "exact_matrix_mb": round(matrix.nbytes / 2**20, 1)}
    if not hnsw:
        return row
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    folder = Path(tempfile.mkdtemp(prefix="dense-threshold-"))
    try:
        client = chromadb.PersistentClient(path=str(folder), settings=ChromaSettings(anonymized_telemetry=False))
        col = client.create_collection("dense-threshold", embedding_function=None,
                                       configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}})
        t = time.perf_counter()
        for lo in range(0, len(matrix), 4096):
            col.add(ids=list(ids[lo:lo + 4096]), embeddings=matrix[lo:lo + 4096])
        row["hnsw_build_s"] = round(time.perf_counter() - t, 1)
        times, recall = [], []
        for q, want in zip(queries, truth, strict=True):
            t = time.perf_counter()
            res = col.query(query_embeddings=[q], n_results=100, include=["distances"])
            times.append(time.perf_counter() - t)
            recall.append(len(want & set(res["ids"][0])) / max(1, len(want)))
        row["hnsw"] = _pcts(times)
        row["hnsw_recall_at_100"] = round(float(np.mean(recall)), 4)
        row["disk_mb"] = round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--vectors", type=Path, help="a library's vectors.npy (else seeded random unit vectors)")
    ap.add_argument("--no-hnsw", action="store_true", help="exact search only")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(0)
    if args.vectors:
        base = np.load(args.vectors, mmap_mode="r")
    else:
        base = rng.standard_normal((max(sizes), 384), dtype=np.float32)
        base /= np.linalg.norm(base, axis=1, keepdims=True)
    report: dict = {"source": str(args.vectors or "random unit vectors, seed 0"), "cores": os.cpu_count(),
                    "load_before": os.getloadavg(), "sizes": []}
    for n in sizes:
        matrix = np.ascontiguousarray(base[:n], dtype=np.float32)
        queries = matrix[rng.integers(0, n, 30)] + 0.05 * rng.standard_normal((30, matrix.shape[1]), dtype=np.float32)
        row = measure(matrix, queries, not args.no_hnsw)
        report["sizes"].append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    report["load_after"] = os.getloadavg()
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
