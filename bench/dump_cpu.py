"""CPU seconds of one BM25-first import, through the dump importer or the JSONL one (issue 36): run each in its own
process, one after the other, to compare the two paths on the same papers where wall time is not steady.

Usage:
    head -n 20000 bench/out/papers-333k-arxiv.json > bench/out/snap20k.json
    zcat ../shared/data/papers-333k.jsonl.gz | head -n 20000 > bench/out/p20k.jsonl
    python bench/dump_cpu.py dump bench/out/snap20k.json; python bench/dump_cpu.py jsonl bench/out/p20k.jsonl
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from citefinder.config import Settings, offline_environment


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", choices=("dump", "jsonl"))
    ap.add_argument("file", type=Path)
    args = ap.parse_args()
    offline_environment()
    from citefinder.library.dumps import import_dumps
    from citefinder.library.store import Library

    folder = Path(tempfile.mkdtemp(prefix="dump-cpu-"))
    try:
        lib = Library.open(Settings(library=folder / "lib"))
        t0, c0 = time.perf_counter(), time.process_time()
        if args.path == "dump":
            report = import_dumps(lib, [args.file], defer_embedding=True).report
        else:
            report = lib.import_files([args.file], defer_embedding=True)
        print(json.dumps({"path": args.path, "added": report.added, "cpu_s": round(time.process_time() - c0, 2),
                          "wall_s": round(time.perf_counter() - t0, 2),
                          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
