"""Import benchmark: a JSONL(.gz) of papers into a fresh library, beside the physical limits.

Measures, in one run: raw ``SentenceTransformer.encode`` throughput on the same texts (the
limit on this machine), bm25s indexing alone, then the full ``Library.import_files`` (wall time,
papers/s, peak RSS, disk size) and the time to open the finished library in a fresh process.

Usage: python bench/bench_import.py PAPERS.jsonl.gz --library DIR [--limit N] [--embedder minilm-int8]
       [--serial] [--out bench/out/x.json]

The raw-encode baseline embeds the same texts the import embeds (the first ``--sample`` papers; give
``--sample`` >= ``--limit`` for all of them) with the library's encoder and batch size, all threads, just
before the import; ``import_fraction_of_raw`` = the import's papers/s over it. ``--serial`` imports the
same papers a second time into DIR-serial with the setting embed_ahead off (encode, then write, one
after the other), for the gain of the overlap in the same run.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from common import emit

from citefinder.config import Settings, offline_environment


def _records(path: Path, limit: int | None) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, limit)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("papers", type=Path)
    ap.add_argument("--library", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=None, help="import only the first N papers")
    ap.add_argument("--sample", type=int, default=1000, help="texts for the raw-encode baseline")
    ap.add_argument("--max-seq-length", type=int, default=None)
    ap.add_argument("--defer-embedding", action="store_true", help="BM25-first import; vectors computed afterwards")
    ap.add_argument("--skip-baselines", action="store_true", help="skip the raw-encode and bm25s-alone baselines")
    ap.add_argument("--embedder", default=None, help="minilm (default), minilm-int8, ...")
    ap.add_argument("--write-batch", type=int, default=None, help="papers per written batch (default the library's "
                    "256; smaller for a small measured run with several batches)")
    ap.add_argument("--serial", action="store_true", help="also import into DIR-serial with embed_ahead off")
    ap.add_argument("--chroma-host", default=None, help="HOST:PORT of a `chroma run` server to import into")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    offline_environment()
    from citefinder.library.store.bm25index import BM25Index, bm25_text
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.library.records import embedding_text
    from citefinder.library.store import Library
    from citefinder.types import Paper

    if args.library.exists() and any(args.library.iterdir()):
        sys.exit(f"{args.library} is not empty; give a new folder")
    overrides = {"library": args.library}
    if args.max_seq_length:
        overrides["embed_max_seq_length"] = args.max_seq_length
    if args.embedder:
        overrides["embedder"] = args.embedder
    if args.chroma_host:
        overrides["chroma_host"] = args.chroma_host
    settings = Settings(**overrides)
    if args.write_batch:
        import citefinder.library.store.writes as writes

        writes.WRITE_BATCH = args.write_batch
    src = args.papers
    # The records are read into this process only where a baseline or --limit needs them: with
    # --skip-baselines and no --limit the peak RSS below is the import's own.
    records = _records(src, args.limit) if args.limit or not args.skip_baselines else []
    if args.limit:
        src = args.library.parent / f"{args.library.name}-input.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    papers = [Paper(r["doc_id"], r["title"], tuple(r.get("authors") or ()), r.get("year"), r.get("venue"),
                    r.get("abstract") or "") for r in records]
    del records
    result: dict = {"papers": len(papers) or None, "machine": f"{platform.node()} {platform.machine()}",
                    "max_seq_length": settings.embed_max_seq_length, "date": time.strftime("%Y-%m-%d %H:%M"),
                    "embedder": settings.embedder, "chroma_host": settings.chroma_host, "load_before": os.getloadavg()}

    emb = Embedder(settings.embedder, settings.embed_max_seq_length, settings.embed_batch_size)
    if not args.skip_baselines:
        emb.encode(["warm up"])
        sample = [embedding_text(p) for p in papers[: args.sample]]
        t = time.perf_counter()
        emb.encode(sample)
        result["raw_encode_papers_per_s"] = len(sample) / (time.perf_counter() - t)
        result["raw_encode_texts"] = len(sample)

        t = time.perf_counter()
        BM25Index.build([p.doc_id for p in papers], [bm25_text(p) for p in papers])
        result["bm25s_alone_s"] = time.perf_counter() - t
    result["defer_embedding"] = args.defer_embedding
    result["write_batch"] = args.write_batch or 256

    del papers
    rss_before_import_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lib = Library.open(settings, embedder=emb)
    t = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int | None) -> None:
        if time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            print(f"  {done}/{total} after {last[0] - t:.0f} s", file=sys.stderr, flush=True)

    report = lib.import_files([src], progress=progress, defer_embedding=args.defer_embedding)
    wall = time.perf_counter() - t
    if "raw_encode_papers_per_s" in result and not args.defer_embedding:
        result["import_fraction_of_raw"] = round(report.added / wall / result["raw_encode_papers_per_s"], 3)
    result.update(
        import_wall_s=wall,
        import_papers_per_s=report.added / wall,
        added=report.added,
        duplicates=report.duplicates,
        failures=len(report.failures),
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        peak_rss_before_import_mb=rss_before_import_mb,
        disk_mb=sum(f.stat().st_size for f in args.library.rglob("*") if f.is_file()) / 2**20,
    )
    if args.serial:
        serial = Library.open(settings.with_overrides(library=args.library.with_name(args.library.name + "-serial"),
                                                      embed_ahead=False), embedder=emb)
        t = time.perf_counter()
        added = serial.import_files([src], defer_embedding=args.defer_embedding).added
        result["serial_import_papers_per_s"] = added / (time.perf_counter() - t)
    result["load_after"] = os.getloadavg()
    opener = (
        "import time,sys; t=time.perf_counter(); from citefinder.config import Settings, offline_environment; "
        "offline_environment(); from citefinder.library.store import Library; "
        f"l=Library.open(Settings(library={str(args.library)!r}, embedder={settings.embedder!r}, "
        f"embed_max_seq_length={settings.embed_max_seq_length}, chroma_host={settings.chroma_host!r})); "
        "n=l.count(); l.bm25_search('neural network', 5); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", opener], capture_output=True, text=True, check=True)
    result["open_s"] = float(out.stdout.strip().splitlines()[-1])
    emit(result, args.out)


if __name__ == "__main__":
    main()
