"""Cold start: a fresh process opens a library and answers one CiteME slot; times and peak RSS.

    python bench/cold_start.py LIBRARY [--embedder minilm-int8] [--chroma-host HOST:PORT]

Run it twice: the first run on a new library also builds and saves its derived indexes.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402 - the clock starts before the imports it measures
import json  # noqa: E402
import resource  # noqa: E402
from pathlib import Path  # noqa: E402

from citefinder.config import Settings, offline_environment  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("library", type=Path)
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--chroma-host", default=None)
    args = ap.parse_args()
    offline_environment()
    from citefinder.evaluate import load_items
    from citefinder.evaluate.runner import item_slot
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline

    t_imports = time.perf_counter()
    overrides = {k: v for k, v in (("embedder", args.embedder), ("chroma_host", args.chroma_host)) if v}
    lib = Library.open(Settings(library=args.library, **overrides))
    papers = lib.count()
    t_open = time.perf_counter()
    Pipeline(lib.settings, lib).cite_slot(item_slot(load_items(DATA / "citeme.jsonl")[0]))
    t_first = time.perf_counter()
    print(json.dumps({
        "papers": papers, "embedded": lib.embedded_count(), "imports_s": t_imports - T0, "open_s": t_open - t_imports,
        "first_slot_s": t_first - t_open, "process_to_answer_s": t_first - T0,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
