"""A library holds exactly what it should, on real Chroma, bm25s and MiniLM, with real processes:
a lost vector segment is named and re-embedded, a read-only folder is searched by an unprivileged
user without a byte changing, a Chroma server killed mid-import ends in one clear line and a
resumed import, and BM25 is rebuilt only when the papers changed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from store_support import assert_consistent

from citefinder.config import Settings
from citefinder.errors import LibraryDamagedError
from citefinder.index.base import derived
from citefinder.index.vectors import VECTORS, dense_search
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.store import Library
from citefinder.library.store.manifest import read_manifest
from citefinder.types import Paper

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"
TITOV = "arxiv:0801.1063"  # "Modeling Online Reviews with Multi-grain Topic Models", in tests/data/papers.jsonl
TITOV_QUERY = "Modeling online reviews with multi-grain topic models"
CLI = "import sys; from citefinder.cli.main import main; sys.exit(main())"


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def _cli(*args: str, env: dict[str, str] | None = None, user: int | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user is not None else []
    return subprocess.run([*prefix, sys.executable, "-c", CLI, *args], env=env or _env(), capture_output=True,
                          text=True, timeout=timeout, cwd="/")


def _fillers(n: int) -> list[Paper]:
    return [Paper(f"f{i}", f"Filler note {i} on subject {i % 11}", authors=(f"Writer{i} Jones",), year=1990 + i % 30)
            for i in range(n)]


def _forget_embedded_clients() -> None:
    import chromadb

    chromadb.api.client.SharedSystemClient.clear_system_cache()


# --- 1. a lost HNSW segment ----------------------------------------------------------------------

def test_lost_vector_segment_is_named_on_open_and_repair_re_embeds(tmp_path, embedder, caplog) -> None:
    settings = Settings(library=tmp_path / "lib")
    lib = Library.open(settings, embedder=embedder)
    assert lib.import_files([TEST_DATA / "papers.jsonl"]).added == 3
    # Chroma flushes its write-ahead queue into the segment folder every 1,000 writes: only then do
    # the first papers' vectors live in that folder alone
    lib.add_papers(_fillers(1000))
    assert dense_search(lib, TITOV_QUERY, 1)[0].doc_id == TITOV
    del lib
    _forget_embedded_clients()
    segments = [d for d in (settings.library / "chroma").iterdir() if d.is_dir()]
    assert len(segments) == 1
    shutil.rmtree(segments[0])

    # the records are all there, but not their vectors: named on open (chroma_files.py), not searched without them
    with pytest.raises(LibraryDamagedError, match=r"vector index of the library .* is missing: its segment folder"):
        Library.open(settings, embedder=embedder)
    _forget_embedded_clients()

    out = _cli("library", "repair", "--library", str(settings.library))
    assert out.returncode == 0, out.stderr
    assert "re-embedded" in out.stdout and "the library is consistent" in out.stdout, out.stdout
    assert "Traceback" not in out.stderr

    _forget_embedded_clients()
    for exact_max in (0, 200_000):  # Chroma's HNSW index, then the exact matrix built from its vectors
        repaired = Library.open(Settings(library=settings.library, exact_dense_max=exact_max), embedder=embedder)
        assert dense_search(repaired, TITOV_QUERY, 1)[0].doc_id == TITOV
    assert len(derived(repaired, VECTORS).doc_ids) == 1003
    assert_consistent(repaired, 1003)


# --- 2. a read-only library folder ---------------------------------------------------------------

NOBODY = 65534


def _snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and folder under ``folder``: content hash, mtime and mode."""
    snap = {}
    for f in sorted(folder.rglob("*")):
        st = f.lstat()
        digest = hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else "dir"
        snap[str(f.relative_to(folder))] = (digest, st.st_mtime_ns, st.st_mode)
    return snap


def _chmod_tree(folder: Path, writable: bool) -> None:
    for f in [folder, *folder.rglob("*")]:
        mode = f.stat().st_mode
        f.chmod(mode | 0o200 if writable else mode & ~0o222)


def test_read_only_library_answers_find_and_stats_and_changes_nothing(tmp_path, embedder) -> None:
    """A shared lab library mounted read-only: an unprivileged user (root ignores chmod) can search it."""
    user = NOBODY if os.geteuid() == 0 else None
    if user is None and os.access("/", os.W_OK):
        pytest.skip("cannot make a folder read-only for this user")
    base = Path(tempfile.mkdtemp(prefix="citefinder-readonly-test-"))  # pytest's tmp_path is private to root
    try:
        base.chmod(0o755)
        folder = base / "library"
        lib = Library.open(Settings(library=folder), embedder=embedder)
        lib.import_files([TEST_DATA / "papers.jsonl"])
        lib.add_papers(_fillers(40))
        assert lib.count() == 43
        del lib
        home = base / "home"
        home.mkdir()
        if user is not None:
            os.chown(home, user, user)
        _chmod_tree(folder, writable=False)
        before = _snapshot(folder)
        env = _env(HOME=str(home), CITEFINDER_USER_SETTINGS=str(home / "settings.json"))

        # the test exercises a folder this user cannot write
        probe = subprocess.run([*(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
                                  if user is not None else []),
                                sys.executable, "-c", f"open({str(folder / 'probe')!r}, 'w')"],
                               capture_output=True, text=True, env=env)
        assert probe.returncode != 0 and "Permission denied" in probe.stderr

        found = _cli("find", f"{TITOV_QUERY} [CITATION].", "--library", str(folder), env=env, user=user)
        assert found.returncode == 0, found.stderr
        assert "Modeling Online Reviews with Multi-grain Topic Models" in found.stdout
        assert "Traceback" not in found.stderr
        stats = _cli("library", "stats", "--json", "--library", str(folder), env=env, user=user)
        assert stats.returncode == 0, stats.stderr
        numbers = json.loads(stats.stdout)
        assert (numbers["papers"], numbers["bm25_documents"]) == (43, 43)
        assert "read-only" in numbers["mode"]
        refused = _cli("library", "import", str(TEST_DATA / "refs.bib"), "--library", str(folder), env=env, user=user)
        assert refused.returncode == 2 and "read-only" in refused.stderr and "Traceback" not in refused.stderr
        assert _snapshot(folder) == before
    finally:
        _chmod_tree(base, writable=True)
        shutil.rmtree(base, ignore_errors=True)


# --- 3. a Chroma server killed mid-import --------------------------------------------------------

def _start_chroma(data: Path, log: Path) -> tuple[subprocess.Popen, str]:
    from conftest import free_port, wait_for_port

    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).with_name("chroma")), "run", "--path", str(data), "--host",
                             "127.0.0.1", "--port", str(port)], stdout=log.open("ab"), stderr=subprocess.STDOUT,
                            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    wait_for_port(port, proc)
    return proc, f"127.0.0.1:{port}"


def _server_count(host: str, collection: str) -> int:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    name, _, port = host.rpartition(":")
    client = chromadb.HttpClient(host=name, port=int(port), settings=ChromaSettings(anonymized_telemetry=False))
    try:
        return int(client.get_collection(collection).count())
    except Exception:  # noqa: BLE001 - not created yet
        return 0


@pytest.mark.server  # starts (and kills) its own Chroma server
def test_chroma_server_killed_mid_import_ends_in_one_line_and_the_import_resumes(tmp_path, embedder) -> None:
    from conftest import stop_process

    n = 1000
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps({"doc_id": f"s{i}", "title": f"Server paper {i} about ranking and retrieval",
                                       "abstract": "words " * 15}) + "\n" for i in range(n)))
    folder, data, log = tmp_path / "lib", tmp_path / "chroma-data", tmp_path / "chroma.log"
    server, host = _start_chroma(data, log)
    try:
        proc = subprocess.Popen([sys.executable, "-c", CLI, "library", "import", str(src), "--library", str(folder),
                                 "--chroma-host", host], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        deadline = time.time() + 300
        collection = None
        while time.time() < deadline and proc.poll() is None:
            collection = collection or read_manifest(folder).get("collection")
            if collection and _server_count(host, collection) > 0:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the import ended before the server could be killed"
        server.send_signal(signal.SIGKILL)  # the server dies mid-import
        server.wait(timeout=30)
        out, err = proc.communicate(timeout=300)
    finally:
        stop_process(server)
    assert proc.returncode == 2, (out, err)
    assert "Traceback" not in err
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip() and not ln.startswith("importing:")]
    assert len(lines) == 1 and "WARNING" not in err, err  # one line besides the progress bar
    line = lines[0]
    assert line.startswith("error: Lost the connection to the Chroma store"), line
    assert "papers of this import were stored" in line and "start the server again" in line
    assert "run the same import again" in line
    stored = int(line.split(". ")[-1].split(" papers of this import")[0].split()[-1])

    server, host = _start_chroma(data, log)  # restarted on the same data
    try:
        again = _cli("library", "import", str(src), "--library", str(folder), "--chroma-host", host)
        assert again.returncode == 0, again.stderr
        counts = re.search(r"added (\d+), duplicates skipped (\d+), failures 0", again.stdout)
        assert counts, again.stdout
        added, dupes = int(counts[1]), int(counts[2])
        assert added + dupes == n and dupes >= stored, again.stdout
        assert _server_count(host, collection) == n
        lib = Library.open(Settings(library=folder, chroma_host=host), embedder=embedder)
        assert sorted(p.doc_id for p in lib.iter_papers()) == sorted(f"s{i}" for i in range(n))  # no duplicates
        assert_consistent(lib, n)
    finally:
        stop_process(server)


# --- 5. BM25 is rebuilt only when the papers changed ---------------------------------------------

def _bm25_files(folder: Path) -> dict[str, tuple[int, int]]:
    """The saved BM25 index's files: inode and mtime (a rebuild swaps in a new folder)."""
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in sorted((folder / "bm25").iterdir())}


def test_writes_that_change_no_paper_do_not_rebuild_bm25(tmp_path, embedder) -> None:
    folder = tmp_path / "lib"
    lib = Library.open(Settings(library=folder), embedder=embedder)
    lib.import_files([TEST_DATA / "papers.jsonl"])
    lib.add_papers(_fillers(30))
    before, generation = _bm25_files(folder), read_manifest(folder)["generation"]
    src = tmp_path / "again.jsonl"
    src.write_text("".join(json.dumps({"doc_id": p.doc_id, "title": p.title, "authors": list(p.authors),
                                       "year": p.year}) + "\n" for p in _fillers(30)))

    assert (lib.add_papers(_fillers(30)).added, lib.add_papers(_fillers(30)).duplicates) == (0, 30)
    assert lib.import_files([ROOT / "tests" / "hostile" / "comments-only.bib"]).added == 0
    assert lib.remove(["no-such-paper"]) == 0
    again = _cli("library", "import", str(src), "--library", str(folder))  # another process, all duplicates
    assert again.returncode == 0 and "added 0, duplicates skipped 30" in again.stdout, again.stdout + again.stderr
    reader = Library.open(Settings(library=folder), embedder=embedder)
    assert len(reader.ensure_bm25()) == 33
    assert (_bm25_files(folder), read_manifest(folder)["generation"]) == (before, generation)

    lib.add_papers([Paper("new", "One more paper on sparse retrieval")])  # a real change does rebuild
    assert _bm25_files(folder) != before and read_manifest(folder)["generation"] == generation + 1
    assert reader.bm25_search("one more paper on sparse retrieval", 1)[0].doc_id == "new"
    assert_consistent(reader, 34)
