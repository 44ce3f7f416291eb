"""``library embed`` killed (SIGKILL) at every stage (issue 35, item 10): right after the kill, before any
resume, `library stats`, the BM25 index and the store agree on every paper, none counted twice, and a
resumed embed ends with every paper stored once. Real CLI processes, Chroma on disk, bm25s, MiniLM; the
kill comes from inside the process at the named stage (a hook patched in by the command line below)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import chromadb
import pytest

from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.library.store.lockfile import FolderLock
from citefinder.library.store.pending import FILE as QUEUE

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
N = 60
BATCH = 20  # the embed writes 3 batches of these

# Each stage names a function the embed calls and the call after which (or, for "encode", during which)
# the process kills itself with SIGKILL: nothing is cleaned up, as with `kill -9`.
STAGES = {
    "dirty flag set": ("citefinder.library.store.core", "LibraryCore", "_mark_dirty", 1),
    "encoding the second batch": ("citefinder.library.encoders.embedder", "Embedder", "encode", 2),
    "first batch stored, still queued": ("citefinder.library.store.writes", "LibraryWrites", "_write_batch", 1),
    "last batch stored, still queued": ("citefinder.library.store.writes", "LibraryWrites", "_write_batch", 3),
    "first batch off the queue": ("citefinder.library.store.pending", "PendingQueue", "remove", 1),
    "last batch off the queue": ("citefinder.library.store.pending", "PendingQueue", "remove", 3),
    "BM25 index saved": ("citefinder.library.store.bm25index", "BM25Index", "save", 1),
    "manifest written": ("citefinder.library.store.core", None, "write_manifest", 2),
}

KILLER = """
import importlib, os, signal, sys
module, owner, name, nth, before, batch = sys.argv[1:7]
del sys.argv[1:7]
import citefinder.library.store.writes as writes
writes.WRITE_BATCH = int(batch)
target = importlib.import_module(module)
holder = getattr(target, owner) if owner != "-" else target
original = getattr(holder, name)
calls = [0]
def hooked(*args, **kwargs):
    calls[0] += 1
    if before == "1" and calls[0] == int(nth):
        os.kill(os.getpid(), signal.SIGKILL)
    out = original(*args, **kwargs)
    if calls[0] == int(nth):
        os.kill(os.getpid(), signal.SIGKILL)
    return out
setattr(holder, name, hooked)
from citefinder.cli.main import main
sys.exit(main())
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OMP_NUM_THREADS": "1"}


def _cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from citefinder.cli.main import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], env=_env(), capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def queued(tmp_path_factory) -> Path:
    """A library of N papers imported with --defer-embedding: all of them wait for their vectors."""
    folder = tmp_path_factory.mktemp("queued")
    src = folder / "papers.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"k{i}", "title": f"Killed embedding {i} on subject {i % 5}",
                                       "authors": [f"Writer{i} Kay"], "year": 2000 + i % 20}) + "\n"
                           for i in range(N)))
    done = _cli("library", "import", str(src), "--defer-embedding", "--library", str(folder / "lib"))
    assert done.returncode == 0, done.stderr
    return folder / "lib"


def _queue_ids(folder: Path) -> set[str]:
    if not (folder / QUEUE).exists():
        return set()
    with sqlite3.connect(folder / QUEUE) as con:
        return {r[0] for r in con.execute("SELECT doc_id FROM pending")}


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_kill_at_any_stage_of_embed_counts_every_paper_once(queued, tmp_path, stage) -> None:
    folder = tmp_path / "lib"
    shutil.copytree(queued, folder)
    module, owner, name, nth = STAGES[stage]
    before = "1" if name == "encode" else "0"
    killed = subprocess.run([sys.executable, "-c", KILLER, module, owner or "-", name, str(nth), before, str(BATCH),
                             "library", "embed", "--library", str(folder)], env=_env(), capture_output=True,
                            text=True, timeout=600)
    assert killed.returncode == -9, (stage, killed.stdout, killed.stderr[-2000:])

    with FolderLock(folder):  # a reader beside a writer (here: the lock held) reads without settling anything
        reader = Library.open(Settings(library=folder))
        assert (reader.count(), len(reader.ensure_bm25())) == (N, N), stage
        assert sorted(p.doc_id for p in reader.iter_papers()) == sorted(f"k{i}" for i in range(N))
    del reader
    chromadb.api.client.SharedSystemClient.clear_system_cache()

    stats = _cli("library", "stats", "--json", "--library", str(folder))  # the first command after the kill
    assert stats.returncode == 0, stats.stderr
    shown = json.loads(stats.stdout)
    assert (shown["papers"], shown["bm25_documents"]) == (N, N), (stage, shown)

    lib = Library.open(Settings(library=folder))
    ids = [p.doc_id for p in lib.iter_papers()]
    assert sorted(ids) == sorted(f"k{i}" for i in range(N))  # each paper once
    stored = set(lib._stored_ids())
    assert not stored & _queue_ids(folder), stage  # a stored paper is not also waiting for its vectors
    assert lib.count() == len(stored) + lib.pending_count() == N
    assert len(lib.ensure_bm25()) == N and lib.problems() == []

    resumed = _cli("library", "embed", "--library", str(folder))
    assert resumed.returncode == 0, resumed.stderr
    lib = Library.open(Settings(library=folder))
    assert (lib.count(), lib.embedded_count(), lib.pending_count(), len(lib.ensure_bm25())) == (N, N, 0, N)
