"""Embedding rate on a device: embed the first N papers of a JSON Lines file (CiteFinder's own, or any dump
CiteFinder reads) with the library's embedder on ``--device`` and print papers/s and peak memory as JSON.

The texts are what a library embeds (title, then abstract: ``records.embedding_text``), in the batches a
library writes (256 papers a call, as ``library embed`` does); the model is loaded and warmed up on one batch
before the clock starts. Peak memory: the process's peak RSS, and on CUDA torch's peak allocated memory.

Usage (on a GPU machine):
    python bench/embed_device.py ../shared/data/papers-333k.jsonl.gz --n 20000 --device cuda
    python bench/embed_device.py ../shared/data/papers-333k.jsonl.gz --n 2000 --device cpu --out bench/out/e.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import resource
import sys
import time
from pathlib import Path

from citefinder.config import offline_environment

CALL = 256  # papers per encode call: a library's write batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("papers", type=Path)
    ap.add_argument("--n", type=int, default=5000, help="papers to embed (the file's first N)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--embedder", default="minilm", help="minilm (default), minilm-int8 (CPU only), mpnet, ...")
    ap.add_argument("--batch-size", type=int, default=32, help="the setting embed_batch_size (a GPU takes >= 256)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    offline_environment()
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.library.readers import read_papers
    from citefinder.library.records import embedding_text
    from citefinder.types import Paper

    papers = [p for p in itertools.islice((p for p in read_papers(args.papers) if isinstance(p, Paper)), args.n)]
    texts = [embedding_text(p) for p in papers]
    embedder = Embedder(args.embedder, 256, args.batch_size, device=args.device)
    t_load = time.perf_counter()
    embedder.encode(texts[:CALL])  # load and warm up (CUDA kernels, allocator)
    load_s = time.perf_counter() - t_load
    import torch

    cuda = embedder.device_used == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0, c0 = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), CALL):
        embedder.encode(texts[start:start + CALL])
    if cuda:
        torch.cuda.synchronize()
    elapsed, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    result = {
        "papers": len(texts),
        "device": embedder.device_used,
        "device_label": embedder.device_label(),
        "embedder": args.embedder,
        "batch_size": embedder.batch_size,
        "seconds": round(elapsed, 2),
        "papers_per_s": round(len(texts) / elapsed, 1) if elapsed else None,
        "cpu_seconds": round(cpu_s, 2),  # on a busy machine papers/s falls with the share of the cores it gets
        "papers_per_cpu_s": round(len(texts) / cpu_s, 1) if cpu_s else None,
        "load_and_warmup_s": round(load_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "peak_cuda_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda else None,
        "torch_threads": torch.get_num_threads(),
        "machine": platform.node(),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
