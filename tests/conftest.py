"""Shared fixtures: a real small library (Chroma on disk + bm25s + MiniLM) built once per session
from 300 papers sampled from ../shared/data (seeded: the gold papers of 24 CiteME excerpts plus
distractors), and a real `chroma run` server on loopback.

Markers (pyproject.toml): ``slow`` (model weights or a built library), ``llm`` (an LLM server process
or DSPy), ``browser`` (headless Chromium), ``server`` (a Chroma server). The fast loop is
``pytest -m "not llm and not browser"``; ``scripts/test.sh`` runs everything on two pytest-xdist
workers, which share the run's builds (``built_once``); a block that is timed runs ``alone``.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from citefinder.config import Settings, offline_environment

pytest_plugins = ["literature_fixtures"]  # fixtures shared by the literature tests

offline_environment()
if os.environ.get("PYTEST_XDIST_WORKER"):
    # two workers on two cores (scripts/test.sh): one compute thread per worker and per process it starts
    # (CLI, Streamlit), so torch's and OpenMP's thread pools do not oversubscribe the cores
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("CITEFINDER_SHARED_DATA", ROOT.parent / "shared" / "data"))
PAPERS_50K = SHARED_DATA / "papers-50k.jsonl.gz"
CITEME = SHARED_DATA / "citeme.jsonl"
TEST_DATA = Path(__file__).resolve().parent / "data"
SAMPLE_SIZE = 300
N_GOLD_ITEMS = 24


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@dataclass
class SmallLibrary:
    library: object  # citefinder.library.store.Library
    settings: Settings
    records: list[dict]  # the papers-50k records it holds
    citeme: list[dict]  # CiteME items whose gold paper is in this library


def sample_records(seed: int = 13) -> tuple[list[dict], list[dict]]:
    """Gold papers of the first answerable CiteME items plus seeded random distractors, read from
    ../shared/data (benchmark data is never copied into the repository)."""
    if not PAPERS_50K.exists() or not CITEME.exists():
        pytest.fail(f"benchmark data missing: {PAPERS_50K} (see shared/DATA.md; set CITEFINDER_SHARED_DATA)")
    items = [i for i in read_jsonl(CITEME) if i["answerable"] and i["gold"]][:N_GOLD_ITEMS]
    gold = {g for i in items for g in i["gold"]}
    papers = read_jsonl(PAPERS_50K)
    chosen = [p for p in papers if p["doc_id"] in gold]
    rest = [p for p in papers if p["doc_id"] not in gold]
    random.Random(seed).shuffle(rest)
    chosen += rest[: SAMPLE_SIZE - len(chosen)]
    have = {p["doc_id"] for p in chosen}
    return chosen, [i for i in items if all(g in have for g in i["gold"])]


@pytest.fixture(autouse=True)
def user_settings_file(tmp_path, monkeypatch) -> Path:
    """Each test saves the app's per-user settings in its own file, never in ~/.config."""
    path = tmp_path / "user-settings.json"
    monkeypatch.setenv("CITEFINDER_USER_SETTINGS", str(path))
    return path


LIBRARY_FIXTURES = {"small_library", "small_library_path", "sampled_records"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what a test's fixtures imply: the small library (MiniLM, Chroma) is slow, a Chroma server is `server`."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & LIBRARY_FIXTURES:
            item.add_marker(pytest.mark.slow)
        if "chroma_server" in names:
            item.add_marker(pytest.mark.server)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # on xdist workers (scripts/test.sh, which keeps this order: --no-loadscope-reorder) the longest
        # modules (browsers, LLM and Chroma servers, the library) start first and the quick ones fill in
        # at the end, so the two workers finish together instead of one waiting on a last long module
        def module(item: pytest.Item) -> str:
            return item.nodeid.split("::")[0]

        weight: dict[str, int] = {}
        for item in items:
            marks = {m.name for m in item.iter_markers()}
            w = 3 if "browser" in marks else 2 if marks & {"llm", "server"} else 1 if "slow" in marks else 0
            weight[module(item)] = max(w, weight.get(module(item), 0))
        items.sort(key=lambda item: -weight[module(item)])  # stable: a module's tests keep their order


def _run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the xdist workers of one run share (their own temporary folders live in it)."""
    return tmp_path_factory.getbasetemp().parent


class _RunLock:
    """One lock of an xdist run: every running test holds it shared; code that times something holds it
    exclusively, so no other worker runs a test meanwhile. A turnstile keeps new tests from overtaking
    a worker that waits for the exclusive lock."""

    def __init__(self, run_dir: Path) -> None:
        # both stay open for the worker's whole session
        self._gate = open(run_dir / "alone.turnstile", "a")
        self._lock = open(run_dir / "alone.lock", "a")

    def shared(self) -> None:
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        fcntl.flock(self._gate, fcntl.LOCK_UN)
        fcntl.flock(self._lock, fcntl.LOCK_SH)

    def exclusive(self) -> None:
        fcntl.flock(self._lock, fcntl.LOCK_UN)
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        fcntl.flock(self._gate, fcntl.LOCK_UN)

    def release(self) -> None:
        fcntl.flock(self._lock, fcntl.LOCK_UN)


_RUN_LOCK = pytest.StashKey[_RunLock]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """On xdist workers each test runs holding the run's lock shared (see ``alone``)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return (yield)
    config = item.config
    if _RUN_LOCK not in config.stash:
        config.stash[_RUN_LOCK] = _RunLock(_run_dir(config._tmp_path_factory))  # the fixture's factory
    lock = config.stash[_RUN_LOCK]
    lock.shared()
    try:
        return (yield)
    finally:
        lock.release()


@pytest.fixture
def alone(request: pytest.FixtureRequest) -> Callable[[], contextlib.AbstractContextManager[None]]:
    """``with alone(): ...`` runs the block while no other xdist worker runs a test (it waits for their
    running tests to end and holds the next ones back): for tests that assert how long something takes.
    Without xdist the block just runs."""

    @contextlib.contextmanager
    def block() -> Iterator[None]:
        lock = request.config.stash.get(_RUN_LOCK, None)
        if lock is None:
            yield
            return
        lock.exclusive()
        try:
            yield
        finally:
            lock.release()
            lock.shared()

    return block


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``build`` fills once per test run and each session then uses as its own.

    Under pytest-xdist (``scripts/test.sh`` runs the suite on two workers) the first worker to get here
    builds it in the run's shared temporary folder, under a lock, and every worker copies that build
    into its own session folder: one build per run, never two processes writing the same folder.
    """
    own = tmp_path_factory.mktemp(name)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        build(own)
        return own
    shared = _run_dir(tmp_path_factory) / f"shared-{name}"
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / ".built").exists():
            shutil.rmtree(shared / "build", ignore_errors=True)  # a build that failed in another worker
            build(shared / "build")
            (shared / ".built").touch()
    shutil.copytree(shared / "build", own, dirs_exist_ok=True)
    return own


def _write_sample(root: Path) -> None:
    records, items = sample_records()
    root.mkdir(parents=True, exist_ok=True)
    (root / "sample.json").write_text(json.dumps({"records": records, "items": items}), encoding="utf-8")


@pytest.fixture(scope="session")
def sampled_records(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], list[dict]]:
    """The seeded sample (papers, CiteME items), read from ../shared/data once per run."""
    sample = json.loads((built_once(tmp_path_factory, "sample", _write_sample) / "sample.json").read_text("utf-8"))
    return sample["records"], sample["items"]


@pytest.fixture(scope="session")
def small_library_path(
    tmp_path_factory: pytest.TempPathFactory, sampled_records
) -> tuple[Path, list[dict], list[dict]]:
    """The sampled papers written as a JSONL file and imported once per run into an embedded library folder."""
    from citefinder.library.store import Library

    records, items = sampled_records

    def build(root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        src = root / "sample.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
        report = Library.open(Settings(library=root / "library")).import_files([src])
        assert report.added == len(records), report

    return built_once(tmp_path_factory, "small-library", build) / "library", records, items


@pytest.fixture(scope="session")
def small_library(small_library_path) -> SmallLibrary:
    from citefinder.library.store import Library

    path, records, items = small_library_path
    settings = Settings(library=path)
    return SmallLibrary(Library.open(settings), settings, records, items)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing listened on port {port} within {timeout:.0f} s")


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory):
    """A real `chroma run` server on a free loopback port; yields "127.0.0.1:PORT", stopped by PID."""
    data = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    chroma = Path(sys.executable).with_name("chroma")
    log = (data / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    try:
        wait_for_port(port, proc)
        yield f"127.0.0.1:{port}"
    finally:
        stop_process(proc)
        log.close()
