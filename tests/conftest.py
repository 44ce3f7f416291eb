"""Shared fixtures: a real small library (Chroma on disk + bm25s + MiniLM) built once per session
from 300 papers sampled from ../shared/data (seeded: the gold papers of 24 CiteME excerpts plus
distractors), and a real `chroma run` server on loopback.

Markers (pyproject.toml): ``slow`` (model weights or a built library), ``llm`` (an LLM server process
or DSPy), ``browser`` (headless Chromium), ``server`` (a Chroma server). The fast loop is
``pytest -m "not llm and not browser"``; ``scripts/test.sh`` runs everything.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from citefinder.config import Settings, offline_environment

offline_environment()

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


@pytest.fixture(scope="session")
def sampled_records() -> tuple[list[dict], list[dict]]:
    return sample_records()


@pytest.fixture(scope="session")
def small_library_path(
    tmp_path_factory: pytest.TempPathFactory, sampled_records
) -> tuple[Path, list[dict], list[dict]]:
    """The sampled papers written as a JSONL file and imported once per session into an embedded library folder."""
    from citefinder.library.store import Library

    records, items = sampled_records
    root = tmp_path_factory.mktemp("small-library")
    src = root / "sample.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    settings = Settings(library=root / "library")
    lib = Library.open(settings)
    report = lib.import_files([src])
    assert report.added == len(records), report
    return root / "library", records, items


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
