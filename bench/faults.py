"""Kill imports and embeds at random points and count what is lost (must be 0) and how long recovery takes.

Each trial builds a fresh library of N papers from ../shared/data/papers-50k.jsonl.gz (the first
N records), starts `citefinder library import` (plain, or --defer-embedding followed by
`library embed`), kills it with SIGKILL at a random moment, then re-runs the same command(s)
to completion and checks: papers stored == N, no duplicates, BM25 and the manifest agree with
Chroma, and every stored vector is found by a dense query. Right after the kill, before anything
resumes, `library stats`, the BM25 index and the store must already agree, no paper counted twice
(issue 35: a kill between a batch reaching Chroma and leaving the queue once counted it twice).

    python bench/faults.py --trials 10 --papers 300
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", ROOT.parent / "shared" / "data")) / "papers-50k.jsonl.gz"
CLI = "import sys; from citefinder.cli.main import main; sys.exit(main())"


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", CLI, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _run(*args: str) -> tuple[int, str]:
    p = _cli(*args)
    out, err = p.communicate()
    return p.returncode, out + err


def _check(folder: Path, expected_ids: set[str]) -> dict:
    """Open the library in this process and compare every count."""
    sys.path.insert(0, str(ROOT))
    from citefinder.config import Settings
    from citefinder.library.store.manifest import read_manifest
    from citefinder.library.store import Library

    lib = Library.open(Settings(library=folder))
    ids = [p.doc_id for p in lib.iter_papers()]
    vec = lib.embedder.encode(["retrieval"])[0].tolist()
    n_vec = lib.embedded_count()
    found = len(lib._collection.query(query_embeddings=[vec], n_results=n_vec, include=[])["ids"][0]) if n_vec else 0
    manifest = read_manifest(folder)
    return {"stored": len(set(ids)), "duplicates": len(ids) - len(set(ids)), "lost": len(expected_ids - set(ids)),
            "bm25": len(lib.ensure_bm25()), "manifest": manifest.get("papers"), "vectors_found": found,
            "vectors": n_vec, "pending": lib.pending_count()}


def _after_kill(folder: Path) -> dict:
    """What the first command after the kill sees: `library stats` against the store's own ids."""
    import sqlite3

    rc, out = _run("library", "stats", "--json", "--library", str(folder))
    if rc:
        return {"stats_rc": rc}
    shown = json.loads(out[out.index("{"):out.rindex("}") + 1])
    sys.path.insert(0, str(ROOT))
    from citefinder.config import Settings
    from citefinder.library.store import Library

    lib = Library.open(Settings(library=folder))
    stored = set(lib._stored_ids())
    queue = folder / "pending.sqlite"
    queued: set[str] = set()
    if queue.exists():
        with sqlite3.connect(queue) as con:
            queued = {r[0] for r in con.execute("SELECT doc_id FROM pending")}
    del lib
    import chromadb

    chromadb.api.client.SharedSystemClient.clear_system_cache()  # the re-run below writes from another process
    return {"stats_papers": shown["papers"], "stats_bm25": shown["bm25_documents"],
            "unique_after_kill": len(stored | queued), "both_after_kill": len(stored & queued)}


def trial(src: Path, folder: Path, ids: set[str], mode: str, kill_after: float) -> dict:
    lib = ["--library", str(folder)]
    first = _cli("library", "import", str(src), *lib, *(["--defer-embedding"] if mode != "import" else []))
    if mode == "embed":  # kill the embed, not the import
        first.communicate()
        first = _cli("library", "embed", *lib)
    time.sleep(kill_after)
    finished = first.poll() is not None
    if not finished:
        first.send_signal(signal.SIGKILL)
    first.communicate()
    right_after = _after_kill(folder) if (folder / "library.json").exists() else {}
    t0 = time.perf_counter()
    rc, out = _run("library", "import", str(src), *lib, *(["--defer-embedding"] if mode != "import" else []))
    if mode != "import":
        rc2, out2 = _run("library", "embed", *lib)
        rc, out = max(rc, rc2), out + out2
    recovery = time.perf_counter() - t0
    state = _check(folder, ids)
    return {"mode": mode, "kill_after_s": round(kill_after, 1), "killed": not finished, "rc": rc,
            "recovery_s": round(recovery, 1), **right_after, **state}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--papers", type=int, default=300)
    ap.add_argument("--max-kill-s", type=float, default=30.0, help="kill at a uniform random time in [2, this]")
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="citefinder-faults-") as tmp:
        src = Path(tmp) / "papers.jsonl"
        records = []
        with gzip.open(DATA, "rt", encoding="utf-8") as f:
            for line in f:
                records.append(json.loads(line))
                if len(records) >= args.papers:
                    break
        src.write_text("".join(json.dumps(r) + "\n" for r in records))
        ids = {r["doc_id"] for r in records}
        results = []
        for i in range(args.trials):
            mode = ("import", "deferred", "embed")[i % 3]
            r = trial(src, Path(tmp) / f"lib{i}", ids, mode, rng.uniform(2.0, args.max_kill_s))
            results.append(r)
            print(json.dumps(r), flush=True)
        lost = sum(r["lost"] for r in results)
        bad = [r for r in results if r["lost"] or r["duplicates"] or r["stored"] != len(ids) or r["bm25"] != len(ids)
               or r["manifest"] != len(ids) or r["vectors_found"] != r["vectors"] or r["pending"] or r["rc"]
               or r.get("stats_rc") or r.get("both_after_kill")
               or r.get("stats_papers", 0) != r.get("unique_after_kill", 0)
               or r.get("stats_bm25", 0) != r.get("unique_after_kill", 0)]
        rec = sorted(r["recovery_s"] for r in results)
        print(f"{len(results)} trials ({sum(r['killed'] for r in results)} killed mid-run), {len(ids)} papers each: "
              f"papers lost {lost}, inconsistent trials {len(bad)}, recovery median {rec[len(rec) // 2]} s, "
              f"max {rec[-1]} s")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
