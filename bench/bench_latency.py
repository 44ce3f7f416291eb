"""Per-slot latency by stage, and a 40-slot draft end to end, on one or more libraries.

Runs the CiteME excerpts (one slot each) through ``Pipeline.cite_slot`` and reports p50/p95 per
stage from the traces, plus the library open time and a 40-slot draft built from 40 excerpts.
Usage: python bench/bench_latency.py --library DIR [--library DIR2 ...] [--out bench/out/latency.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path

from common import write_json

from citefinder.config import Settings, offline_environment

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", type=Path, action="append", required=True)
    ap.add_argument("--queries", type=Path, default=DATA / "citeme.jsonl")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--embedder", default=None, help="the libraries' embedder (minilm-int8 for an int8 library)")
    ap.add_argument("--chroma-host", default=None, help="HOST:PORT of the `chroma run` server holding the libraries")
    ap.add_argument("--query-encoder", default=None, help="the dense agents' query side: same (default) or trained")
    ap.add_argument("--no-pin", action="store_true",
                    help="encode queries on all torch threads (the behaviour before the one-thread pin), to compare")
    args = ap.parse_args()
    offline_environment()
    if args.no_pin:
        from citefinder.library.encoders import embedder

        embedder.SINGLE_THREAD_MAX_TEXTS = 0
    from citefinder.evaluate import load_items
    from citefinder.evaluate.runner import item_slot
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    items = load_items(args.queries)
    out = []
    overrides = {k: v for k, v in (("embedder", args.embedder), ("chroma_host", args.chroma_host),
                                   ("query_encoder", args.query_encoder)) if v}
    for lib_dir in args.library:
        t = time.perf_counter()
        lib = Library.open(Settings(library=lib_dir, **overrides))
        lib.count()
        open_s = time.perf_counter() - t
        pipe = Pipeline(lib.settings, lib)
        t = time.perf_counter()
        pipe.cite_slot(item_slot(items[0]))  # warm-up: model load, derived indexes built or loaded, caches
        first_slot_s = time.perf_counter() - t
        per_stage: dict[str, list[float]] = {}
        totals = []
        for item in items:
            t = time.perf_counter()
            r = pipe.cite_slot(item_slot(item))
            totals.append(time.perf_counter() - t)
            for tr in r.traces:
                per_stage.setdefault(tr.agent, []).append(tr.elapsed_s)
        from citefinder.text.slots import find_slots

        draft = "\n\n".join([i.text for i in items if len(find_slots(i.text)) == 1][:40])
        t = time.perf_counter()
        res = pipe.cite_text(draft)
        draft_s = time.perf_counter() - t
        row = {
            "library": str(lib_dir), "query_encoder": lib.settings.query_encoder, "papers": lib.count(),
            "embedded": lib.embedded_count(), "open_s": open_s,
            "first_slot_s": first_slot_s, "cold_start_s": open_s + first_slot_s, "load_avg_end": os.getloadavg(),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "query_threads": "all" if args.no_pin else 1,
            "slot_p50_s": statistics.median(totals), "slot_p95_s": pct(totals, 0.95),
            "stages": {a: {"p50_ms": 1000 * statistics.median(v), "p95_ms": 1000 * pct(v, 0.95)} for a, v in per_stage.items()},
            "draft_slots": len(res), "draft_s": draft_s,
        }
        print(json.dumps(row, indent=1), flush=True)
        out.append(row)
    write_json(args.out, {"date": time.strftime("%Y-%m-%d %H:%M"), "rows": out}, indent=1)


if __name__ == "__main__":
    main()
