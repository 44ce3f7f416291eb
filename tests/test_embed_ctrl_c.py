"""Ctrl-C during ``library embed``, pressed again while it stops (issue 36): the stop still ends in the one
"Interrupted: ..." line with exit code 130 and a clean manifest, never a bare "interrupted", a dirty manifest
or "terminate called without an active exception" (the process aborted under a running forward).

Real CLI processes, Chroma on disk, bm25s, MiniLM; SIGINT comes as from a terminal (Python's own handler),
sent by the process to itself from a hook at the named moment (the command line below patches it in)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.library.store import Library, stopping
from citefinder.library.store.manifest import read_manifest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
N = 60
BATCH = 20  # the embed writes 3 batches of these

# The first Ctrl-C comes while the worker embeds the third batch; the second one while the stop waits for
# that batch ("worker"), or while the stop saves the library's state (BM25 and the manifest: "saving").
INTERRUPTER = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal
stage, batch = sys.argv[1:3]
del sys.argv[1:3]
import citefinder.library.store.writes as writes
writes.WRITE_BATCH = int(batch)
from citefinder.library.store.bm25index import BM25Index
from citefinder.library.encoders.embedder import Embedder

MAIN = threading.main_thread().ident

def main_in(name, file):
    frame = sys._current_frames().get(MAIN)
    while frame is not None:
        if frame.f_code.co_name == name and frame.f_code.co_filename.endswith(file):
            return True
        frame = frame.f_back
    return False

encode, build = Embedder.encode, BM25Index.build_stream
calls = [0]
pressed = [False]

def hooked_encode(self, texts, **kw):
    calls[0] += 1
    if calls[0] == 3:  # the first batch is written by now
        pressed[0] = True
        os.kill(os.getpid(), signal.SIGINT)
        if stage == "worker":
            end = time.monotonic() + 60
            while not main_in("close", "ahead.py") and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(0.3)  # the main thread now waits for this batch
            os.kill(os.getpid(), signal.SIGINT)
    return encode(self, texts, **kw)  # a real forward runs while the main thread stops

def hooked_build(pairs, **kw):
    if stage == "saving" and pressed[0]:
        pressed[0] = False
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)  # the handler runs here, in the middle of the rebuild
    return build(pairs, **kw)

Embedder.encode = hooked_encode
BM25Index.build_stream = staticmethod(hooked_build)
from citefinder.cli.main import main
sys.exit(main())
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture(scope="module")
def queued(tmp_path_factory) -> Path:
    """A library of N papers imported with --defer-embedding: all of them wait for their vectors."""
    folder = tmp_path_factory.mktemp("queued")
    src = folder / "papers.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"q{i}", "title": f"Stopped embedding {i} on subject {i % 5}",
                                       "abstract": "words about ranking and retrieval " * 12}) + "\n"
                           for i in range(N)))
    code = "import sys; from citefinder.cli.main import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", code, "library", "import", str(src), "--defer-embedding",
                           "--library", str(folder / "lib")], env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return folder / "lib"


@pytest.mark.parametrize("stage", ["worker", "saving"])
def test_a_second_ctrl_c_while_embed_stops_still_ends_in_the_one_message(queued, tmp_path, stage) -> None:
    folder = tmp_path / "lib"
    shutil.copytree(queued, folder)
    run = subprocess.run([sys.executable, "-c", INTERRUPTER, stage, str(BATCH), "library", "embed",
                          "--library", str(folder)], env=_env(), capture_output=True, text=True, timeout=600)
    err = run.stderr
    assert run.returncode == 130, (stage, run.returncode, err[-2000:])
    assert "terminate called" not in err and "Traceback" not in err, err[-2000:]
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert last.startswith("Interrupted: ") and "run `citefinder library embed` again" in last, err[-2000:]
    embedded = int(last.split("Interrupted: ")[1].split()[0])
    assert 0 < embedded < N
    assert read_manifest(folder)["dirty"] is False  # the stop saved the library's state to its end

    lib = Library.open(Settings(library=folder))
    assert (lib.count(), lib.embedded_count(), lib.pending_count()) == (N, embedded, N - embedded)
    assert len(lib.ensure_bm25()) == N and lib.problems() == []
    assert lib.embed_pending() == N - embedded
    assert (lib.embedded_count(), lib.pending_count()) == (N, 0)


def test_while_finishing_one_more_ctrl_c_waits_and_a_third_one_stops_at_once() -> None:
    assert threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with stopping.finishing("saving"):
            signal.raise_signal(signal.SIGINT)
            time.sleep(0.05)  # the handler runs: noted, not raised
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with pytest.raises(KeyboardInterrupt), stopping.finishing("saving"):
            signal.raise_signal(signal.SIGINT)
            time.sleep(0.05)
            signal.raise_signal(signal.SIGINT)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_finishing_off_the_main_thread_changes_no_handler() -> None:
    seen: list[object] = []

    def work() -> None:
        with stopping.finishing("saving"):
            seen.append(signal.getsignal(signal.SIGINT))

    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [before]
