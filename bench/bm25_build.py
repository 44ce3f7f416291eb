"""Time the BM25 rebuild of an existing library from its stored papers, with its peak RSS.

    python bench/bm25_build.py LIBRARY [--out bench/out/bm25-build.json]

Builds what a write's commit builds (``LibraryCore._rebuild_bm25``, not saved) in this process; run
against another checkout with PYTHONPATH to compare the code of two commits on the same library.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

from common import write_json

from citefinder.config import Settings, offline_environment


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("library", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    offline_environment()
    from citefinder.library.store import Library

    lib = Library.open(Settings(library=args.library))
    rss_open = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    index = lib._rebuild_bm25("bench", save=False)
    result = {
        "library": str(args.library), "papers": len(index), "build_s": round(time.perf_counter() - t, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "rss_after_open_mb": round(rss_open), "load": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps(result))
    write_json(args.out, result, indent=1)


if __name__ == "__main__":
    main()
