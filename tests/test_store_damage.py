"""Ways a library's files get damaged on disk, each named in one line and repaired from what the stored papers
allow (issues 21, 51): a half-truncated HNSW segment ("Error finding id"), a half-truncated index_metadata.pickle
(what a full disk during Chroma's compaction leaves: "Error sending backfill request to compactor"), a deleted
HNSW segment folder (Chroma opens it as if nothing were wrong), chroma.sqlite3 cut in half (Chroma: "Cannot
connect ... database disk image is malformed"), and a half-truncated embedding queue.
Real Chroma, bm25s and MiniLM, the CLI run in its own process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import citefinder
from citefinder.config import Settings
from citefinder.library.store import Library, faults
from citefinder.types import Paper

pytestmark = pytest.mark.slow
ROOT = Path(citefinder.__file__).resolve().parents[1]  # the code under test, also in the CLI's process
CLI = "import sys; from citefinder.cli.main import main; sys.exit(main())"
QUERY = "Paper 17 on topic 3 and retrieval [CITATION]"


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True, text=True, timeout=600,
                          cwd="/")


def _papers(n: int) -> list[Paper]:
    return [Paper(f"p{i}", f"Paper {i} on topic {i % 7} and retrieval", authors=(f"A{i} Smith",), year=2000 + i % 20)
            for i in range(n)]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Path:
    """A library of 1,200 papers whose vectors Chroma flushed into its HNSW segment folder."""
    folder = tmp_path_factory.mktemp("damage") / "lib"
    Library.open(Settings(library=folder)).add_papers(_papers(1200))
    import chromadb

    chromadb.api.client.SharedSystemClient.clear_system_cache()
    return folder


def _halve(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _refused(*args: str) -> tuple[str, str]:
    """The CLI run on ``args`` refused (exit 2): its last error line and its standard error."""
    out = _cli(*args)
    assert out.returncode == 2, out.stderr
    return out.stderr.strip().splitlines()[-1], out.stderr


def _done(*args: str) -> str:
    """The CLI run on ``args`` succeeded: its standard output."""
    out = _cli(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _segment(embedded: Path, folder: Path) -> Path:
    """A copy of ``embedded`` at ``folder``; its one HNSW segment folder."""
    shutil.copytree(embedded, folder)
    (segment,) = [d for d in (folder / "chroma").iterdir() if d.is_dir()]
    return segment


@pytest.mark.parametrize(("victim", "said"), [("data_level0.bin", "Error finding id"),
                                              ("index_metadata.pickle", "backfill request to compactor")])
def test_a_damaged_vector_index_is_named_and_rebuilt(embedded, tmp_path, victim, said):
    folder = tmp_path / "lib"
    segment = _segment(embedded, folder)
    _halve(segment / victim)

    last, _ = _refused("find", QUERY, "--library", str(folder))
    assert last.startswith("error: Chroma's vector index of the library") and said in last
    assert "citefinder library repair" in last and "unexpected" not in last

    stdout = _done("library", "repair", "--library", str(folder))
    assert "vector index was damaged" in stdout and "moved it aside" in stdout
    assert "the library is consistent" in stdout and "holds 1200 papers (0 awaiting vectors)" in stdout
    assert '"doc_id": "p17"' in _done("find", QUERY, "--library", str(folder), "--json")


def test_a_deleted_vector_index_folder_is_named_and_rebuilt(embedded, tmp_path):
    folder = tmp_path / "lib"
    segment = _segment(embedded, folder)
    shutil.rmtree(segment)

    for command in (["library", "stats"], ["find", QUERY]):
        last, err = _refused(*command, "--library", str(folder))
        assert last.startswith("error: Chroma's vector index of the library") and "is missing" in last, last
        assert f"chroma/{segment.name}" in last and "citefinder library repair" in last
        assert "InternalError" not in err and "Traceback" not in err

    stdout = _done("library", "repair", "--library", str(folder))
    assert "re-embedded" in stdout and "the library is consistent" in stdout, stdout
    assert "holds 1200 papers (0 awaiting vectors)" in stdout
    assert '"doc_id": "p17"' in _done("find", QUERY, "--library", str(folder), "--json")


def test_a_store_file_cut_in_half_is_named_as_damage_and_repair_keeps_what_it_holds(embedded, tmp_path):
    folder = tmp_path / "lib"
    shutil.copytree(embedded, folder)
    _halve(folder / "chroma" / "chroma.sqlite3")

    last, _ = _refused("library", "stats", "--library", str(folder))
    assert "Chroma store file" in last and "is damaged (database disk image is malformed" in last, last
    assert "Cannot connect" not in last and "citefinder library repair" in last

    stdout = _done("library", "repair", "--library", str(folder))
    assert "the Chroma store file chroma.sqlite3 was damaged" in stdout and "set the store aside" in stdout
    kept = int(stdout.split("stored again the ")[1].split()[0])
    assert 100 < kept < 1200, stdout  # the records of the half that is left
    assert f"holds {kept} papers (0 awaiting vectors)" in stdout
    assert any(d.name.startswith("damaged-store-") for d in folder.iterdir())
    lib = Library.open(Settings(library=folder))
    assert (lib.count(), lib.embedded_count()) == (kept, kept) and lib.problems() == []


def test_a_damaged_embedding_queue_is_named_and_what_it_holds_is_kept(tmp_path):
    folder = tmp_path / "lib"
    Library.open(Settings(library=folder)).add_papers(_papers(1200), defer_embedding=True)
    _halve(folder / "pending.sqlite")

    last, _ = _refused("library", "stats", "--library", str(folder))
    assert "The embedding queue" in last and "is damaged (database disk image is malformed)" in last
    assert "citefinder library repair" in last

    stdout = _done("library", "repair", "--library", str(folder))
    assert "the embedding queue pending.sqlite was damaged" in stdout
    kept = int(stdout.split("a new one holds the ")[1].split()[0])
    assert 400 < kept < 1200  # the rows of the half that is left
    assert (folder / "pending.sqlite.damaged").is_file()
    assert f"holds {kept} papers ({kept} awaiting vectors)" in stdout
    assert _cli("library", "embed", "--library", str(folder)).returncode == 0
    lib = Library.open(Settings(library=folder))
    assert (lib.count(), lib.pending_count(), lib.embedded_count()) == (kept, 0, kept)


def test_fault_kinds():
    assert faults.classify(RuntimeError("Error executing plan: Internal error: Error finding id")) == \
        faults.DAMAGED_INDEX
    assert faults.classify(RuntimeError("Error sending backfill request to compactor: No space left on device")) == \
        faults.DISK_FULL
    assert faults.classify(RuntimeError("database disk image is malformed")) == faults.DAMAGED_FILE
    assert not faults.is_environmental(RuntimeError("Error finding id"))  # a lost vector is still re-checked
