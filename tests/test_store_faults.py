"""Faults on a real library (Chroma on disk, bm25s, MiniLM): bad records, failed writes, two
writer processes, readers beside a writer, damaged and vanished stores, Ctrl-C, one server."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from store_support import assert_consistent

from citefinder.config import Settings
from citefinder.errors import ImportAbortedError, LibraryDamagedError
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.store import Library
from citefinder.library.store.lockfile import FolderLock
from citefinder.library.store.manifest import read_manifest, write_manifest
from citefinder.types import Paper

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _papers(n: int, start: int = 0, prefix: str = "Paper") -> list[Paper]:
    return [Paper(f"p{i}", f"{prefix} {i} on topic {i % 7} and retrieval", authors=(f"Author{i} Smith",),
                  year=2000 + i % 20, source="gen") for i in range(start, start + n)]


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_bad_record_objects_never_stop_an_import(tmp_path, embedder) -> None:
    papers = _papers(300)
    bad = {100: {"entry_type": {"a": 1}}, 200: {"title": "Lone \ud800 surrogate"}, 280: {"authors": 7}}
    stream = [Paper(**{**p.__dict__, **bad.get(i, {})}) for i, p in enumerate(papers)]
    for defer in (False, True):
        lib = Library.open(Settings(library=tmp_path / f"lib-{defer}"), embedder=embedder)
        report = lib.add_papers(stream, defer_embedding=defer)
        assert report.added == 298
        assert [f.source for f in report.failures] == ["gen", "gen"]
        assert "entry_type" in report.failures[0].reason and "authors" in report.failures[1].reason
        assert lib.get(["p200"])[0].title == "Lone \ufffd surrogate"
        if defer:
            assert lib.embed_pending() == 298
            assert (lib.pending_count(), lib.embedded_count()) == (0, 298)
        assert_consistent(lib, 298)


def test_failed_batch_write_does_not_remember_its_dedupe_keys(tmp_path, embedder, monkeypatch) -> None:
    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    real = embedder.encode
    calls = {"n": 0}

    def full_disk_once(texts, **kw):  # noqa: ANN001, ANN003
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(texts, **kw)

    monkeypatch.setattr(embedder, "encode", full_disk_once)
    with pytest.raises(ImportAbortedError) as info:
        lib.add_papers(_papers(300))
    message = str(info.value)
    assert "is full" in message and "256 papers of this import were stored" in message and "again" in message
    assert info.value.report.added == 256
    monkeypatch.setattr(embedder, "encode", real)
    retry = lib.add_papers(_papers(300))
    assert (retry.added, retry.duplicates) == (44, 256)
    assert_consistent(lib, 300)


def test_two_processes_importing_into_one_library_lose_nothing(tmp_path) -> None:
    folder = tmp_path / "lib"
    files = [_write_jsonl(tmp_path / f"part{k}.jsonl",
                          [{"doc_id": f"k{k}-{i}", "title": f"Process {k} paper {i} about dense retrieval"}
                           for i in range(300)]) for k in (1, 2)]
    # both writers create the new library at once, then import into it at once
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    code = "import sys; from citefinder.cli.main import main; sys.exit(main())"
    procs = [subprocess.Popen([sys.executable, "-c", code, "library", "import", str(f), "--library", str(folder)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in files]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all("added 300" in out for out, _ in outs)
    lib = Library.open(Settings(library=folder))
    assert lib.embedded_count() == 600
    assert_consistent(lib, 600)


def test_reader_sees_a_writers_papers_and_never_clears_its_dirty_flag(tmp_path, embedder) -> None:
    settings = Settings(library=tmp_path / "lib")
    reader = Library.open(settings, embedder=embedder)
    writer = Library.open(settings, embedder=embedder)
    writer.add_papers(_papers(30))
    assert reader.bm25_search("Paper 17 on topic 3", 1)[0].doc_id == "p17"  # newer generation reloaded
    other_process = FolderLock(settings.library)  # a second lock object: another writer's flock
    with other_process:
        manifest = read_manifest(settings.library)
        write_manifest(settings.library, {**manifest, "dirty": True})
        Library.open(settings, embedder=embedder).stats()
        assert read_manifest(settings.library)["dirty"] is True
    # the writer died: the next reader that can take the lock finishes its commit
    Library.open(settings, embedder=embedder).stats()
    assert read_manifest(settings.library)["dirty"] is False


def test_unchanged_write_does_not_rebuild_bm25(tmp_path, embedder) -> None:
    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    lib.add_papers(_papers(20))
    generation = read_manifest(lib.path)["generation"]
    again = lib.add_papers(_papers(20))
    assert (again.added, again.duplicates) == (0, 20)
    assert read_manifest(lib.path)["generation"] == generation


def test_damaged_bm25_is_rebuilt_and_a_vanished_store_is_reported(tmp_path, embedder) -> None:
    settings = Settings(library=tmp_path / "lib")
    Library.open(settings, embedder=embedder).add_papers(_papers(40))
    for f in (settings.library / "bm25").iterdir():
        if f.suffix == ".npy":
            f.write_bytes(f.read_bytes()[:10])
    (settings.library / "bm25" / "doc_ids.json").unlink()
    lib = Library.open(settings, embedder=embedder)
    assert lib.bm25_search("Paper 17 on topic 3", 1)[0].doc_id == "p17"
    del lib
    import chromadb

    chromadb.api.client.SharedSystemClient.clear_system_cache()
    (settings.library / "chroma" / "chroma.sqlite3").unlink()
    with pytest.raises(LibraryDamagedError, match="should hold 40 papers.*library repair"):
        Library.open(settings, embedder=embedder)
    repaired = Library.open(settings, embedder=embedder, repair=True)
    assert repaired.count() == 0 and read_manifest(settings.library)["papers"] == 0


def test_ctrl_c_during_import_ends_in_one_clear_line(tmp_path) -> None:
    src = _write_jsonl(tmp_path / "many.jsonl", [{"doc_id": f"c{i}", "title": f"Interrupted paper {i} about ranking "
                                                  + "words " * 20} for i in range(3000)])
    folder = tmp_path / "lib"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # as from a terminal: a shell starts a background job's children with SIGINT ignored, and so would this one
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from citefinder.cli.main import main; sys.exit(main())")
    proc = subprocess.Popen([sys.executable, "-c", code, "library", "import", str(src), "--library", str(folder)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    err_parts: list[str] = []
    first_batch = threading.Event()

    def read_stderr() -> None:  # the progress bar moves once per stored batch: interrupt after the first
        for chunk in iter(lambda: proc.stderr.read(64), ""):
            err_parts.append(chunk)
            if re.search(r"\| *[1-9]\d*/3000 ", "".join(err_parts)):
                first_batch.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    while not first_batch.wait(timeout=0.2) and reader.is_alive():
        pass  # until the first batch is stored, or the import ended without one
    assert first_batch.is_set(), "".join(err_parts)
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait(timeout=300)
    reader.join(timeout=60)
    err = "".join(err_parts)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    last = [ln for ln in err.splitlines() if ln.strip()][-1]
    assert last.startswith("Interrupted: ") and "papers of this import were stored" in last
    stored = int(last.split("Interrupted: ")[1].split()[0])
    lib = Library.open(Settings(library=folder))
    assert_consistent(lib, stored)


def test_each_folder_gets_its_own_collection_on_a_shared_server(tmp_path, chroma_server, embedder) -> None:
    a = Library.open(Settings(library=tmp_path / "a", chroma_host=chroma_server), embedder=embedder)
    a.add_papers(_papers(10))
    b = Library.open(Settings(library=tmp_path / "b", chroma_host=chroma_server), embedder=embedder)
    assert (a.count(), b.count()) == (10, 0)
    assert a.collection_name != b.collection_name
    assert Library.open(Settings(library=tmp_path / "a", chroma_host=chroma_server), embedder=embedder).count() == 10
