"""The citation-context memory (issue 20): packs read with clear failures, records matched to the library
by the identity rule (now and when papers arrive later), only matched sentences embedded, imports that are
idempotent and hold the writer lock, counts in `library stats`, and a damaged memory that says so and is
repaired. Real parts: a library of tests/data/latex/refs.bib (Chroma, MiniLM), a real SQLite file."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.errors import InputError, LibraryDamagedError, StoreUnavailableError
from citefinder.library.contexts import api
from citefinder.library.contexts.memory import FILE, memory_of
from citefinder.library.contexts.records import parse_filters, read_pack
from citefinder.library.store import Library
from citefinder.library.store.lockfile import FolderLock
from citefinder.types import ImportFailure

pytestmark = pytest.mark.slow  # a real library (MiniLM)

LATEX = Path(__file__).resolve().parent / "data" / "latex"
SHARED_PACK = Path(__file__).resolve().parents[2] / "shared" / "data" / "cite-contexts" / "contexts.jsonl.gz"


def rec(text: str, title: str, *, year: int | None = None, doi: str | None = None, citing: str = "github:a/b",
        split: str = "train", authors: list[str] | None = None, **extra: object) -> dict:
    return {"id": f"t-{abs(hash((text, title))) % 10**6}", "text": text, "prev": None, "next": None,
            "cited": {"title": title, "year": year, "authors": authors or [], "doc_id": None, "doi": doi},
            "citing": {"paper": citing, "title": None, "year": None}, "group": f"{citing}:1", "source": "latex",
            "license": "MIT", "split": split, **extra}


PACK = [
    rec("The Transformer [CITATION] relies on self-attention alone.", "Attention is all you need", year=2017),
    rec("Masked language model pretraining [CITATION] transfers to many tasks.", "BERT pre-training (any title)",
        doi="https://doi.org/10.18653/V1/N19-1423"),
    rec("A robustly optimized recipe [CITATION] trains longer on more data.",
        "RoBERTa: A robustly optimized BERT pretraining approach", year=2019, citing="github:c/d"),
    rec("Nobody has [CITATION] in their library.", "A Paper Nobody Has", year=2021),
    rec("Same title, another decade [CITATION].", "Attention Is All You Need", year=2005),
    rec("Held out [CITATION] for testing.", "Deep Residual Learning for Image Recognition", year=2016, split="test"),
]


def write_pack(path: Path, rows: list[dict], bad: bool = True) -> Path:
    lines = [json.dumps(r) for r in rows]
    if bad:
        lines += ["{not json", json.dumps({"text": "no cited paper [CITATION]"}), json.dumps(rec("", "Empty text"))]
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def refs_library(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("refs-library") / "library"
    report = Library.open(Settings(library=root)).import_files([LATEX / "refs.bib"])
    assert report.added == 24
    return root


@pytest.fixture
def library(refs_library, tmp_path) -> Library:
    shutil.copytree(refs_library, tmp_path / "library")
    return Library.open(Settings(library=tmp_path / "library"))


def test_pack_lines_are_read_with_failures_naming_their_line(tmp_path):
    pack = write_pack(tmp_path / "p.jsonl.gz", PACK)
    items = list(read_pack(pack))
    failures = [i for i in items if isinstance(i, ImportFailure)]
    assert len(items) - len(failures) == len(PACK)
    assert [f.source for f in failures] == ["p.jsonl.gz:7", "p.jsonl.gz:8", "p.jsonl.gz:9"]
    assert "not valid JSON" in failures[0].reason and "'cited'" in failures[1].reason
    assert "citing sentence" in failures[2].reason
    assert len([i for i in read_pack(pack, parse_filters(["split=train"])) if not isinstance(i, ImportFailure)]) == 5
    kept = [i for i in read_pack(pack, parse_filters(["split!=train", "citing.paper=github:a/b"]))]
    titles = [r.title for r in kept if not isinstance(r, ImportFailure)]
    assert titles == ["Deep Residual Learning for Image Recognition"]
    with pytest.raises(InputError, match="FIELD=VALUE"):
        parse_filters(["split"])


def test_import_matches_by_identity_rule_embeds_only_matched_and_is_idempotent(library, tmp_path):
    pack = write_pack(tmp_path / "p.jsonl", PACK)
    report = api.import_contexts(library, read_pack(pack, parse_filters(["split=train"])), pack=pack.name)
    assert (report.added, report.duplicates, len(report.failures)) == (5, 0, 2)  # the third bad line has no split
    # title+year, DOI (any spelling), title: three matched; an unknown title and a contradicting year are kept unmatched
    assert report.matched == 3 and report.embedded == 3
    memory = memory_of(library)
    records, doc_ids, matrix = memory.vectors()
    assert len(records) == 3 and matrix.shape == (3, 384)
    assert sorted(doc_ids) == sorted({library.by_key(k).doc_id for k in
                                      ("Vaswani.Shazeer.ea.2017", "Devlin.Chang.ea.2019", "Liu.Ott.Goyal.ea.2019")})
    assert library.stats()["contexts"] == 5 and library.stats()["papers_cited"] == 3
    again = api.import_contexts(library, read_pack(pack, parse_filters(["split=train"])))
    assert (again.added, again.duplicates, again.matched, again.embedded) == (0, 5, 0, 0)
    assert memory.counts()["contexts"] == 5


def test_papers_imported_later_match_without_rereading_and_removed_ones_unmatch(library, tmp_path):
    api.import_contexts(library, read_pack(write_pack(tmp_path / "p.jsonl", PACK, bad=False)))
    memory = memory_of(library)
    assert memory.counts()["papers_cited"] == 4  # no filter: the test-split record's paper is in the library
    late = tmp_path / "late.jsonl"
    late.write_text(json.dumps({"doc_id": "x:nobody", "title": "A paper nobody has", "year": 2021}) + "\n")
    library.import_files([late])
    assert memory.counts()["papers_cited"] == 5
    assert "x:nobody" in memory.matched_papers()
    assert len(memory.vectors()[0]) == 5  # the test-split record matched too (no filter this time)
    library.remove(["x:nobody"])
    assert "x:nobody" not in memory.matched_papers() and memory.counts()["contexts"] == 6


def test_import_takes_the_writer_lock_and_a_read_only_library_refuses(library, tmp_path):
    import threading

    pack = write_pack(tmp_path / "p.jsonl", PACK, bad=False)
    other = FolderLock(library.path)
    other.acquire()
    done = threading.Event()
    worker = threading.Thread(target=lambda: (api.import_contexts(library, read_pack(pack)), done.set()))
    worker.start()
    assert not done.wait(1.5)  # waits for the other writer
    assert not memory_of(library).exists() or memory_of(library).counts()["contexts"] == 0
    other.release()
    worker.join(60)
    assert done.is_set() and memory_of(library).counts()["contexts"] == 6

    library.read_only = True
    with pytest.raises(StoreUnavailableError, match="read-only"):
        api.import_contexts(library, read_pack(pack))


def test_a_damaged_memory_says_so_and_library_repair_sets_it_aside(library, tmp_path):
    from citefinder.pipeline.pipeline import Pipeline

    api.import_contexts(library, read_pack(write_pack(tmp_path / "p.jsonl", PACK, bad=False)))
    memory_of(library).close()
    (library.path / FILE).write_bytes(b"this is not a database" * 100)
    fresh = Library.open(Settings(library=library.path))
    with pytest.raises(LibraryDamagedError, match="library repair"):
        api.import_contexts(fresh, read_pack(write_pack(tmp_path / "q.jsonl", PACK, bad=False)))
    result = Pipeline(fresh.settings, fresh).cite_text("The Transformer [CITATION] relies on self-attention.")[0]
    trace = result.trace("cited-as")
    assert trace is not None and trace.status == "skipped" and "damaged" in trace.message
    assert result.candidates  # the other agents still answer
    assert any("context memory" in p and "damaged" in p for p in fresh.problems())
    repaired = Library.open(Settings(library=library.path), repair=True)
    assert any("moved aside" in line for line in repaired.repair_log)
    assert not (library.path / FILE).exists() and list(library.path.glob(f"{FILE}.damaged-*"))
    assert repaired.problems() == []


def test_repair_rematches_a_memory_whose_matches_were_lost(library, tmp_path):
    api.import_contexts(library, read_pack(write_pack(tmp_path / "p.jsonl", PACK, bad=False)))
    with sqlite3.connect(library.path / FILE) as con:
        con.execute("DELETE FROM matches")
    repaired = Library.open(Settings(library=library.path), repair=True)
    assert any("re-matched the context memory" in line for line in repaired.repair_log)
    assert memory_of(repaired).counts()["contexts_matched"] == 4


@pytest.mark.skipif(not SHARED_PACK.exists(), reason="../shared/data/cite-contexts missing")
def test_the_real_pack_imports_one_repository_filtered(library):
    filters = parse_filters(["split=train", "citing.paper=github:kukas/masters-thesis"])
    report = api.import_contexts(library, read_pack(SHARED_PACK, filters), pack=SHARED_PACK.name)
    assert report.added > 50 and not report.failures
    held = memory_of(library)
    with sqlite3.connect(held.path) as con:
        assert {r[0] for r in con.execute("SELECT DISTINCT citing FROM records")} == {"github:kukas/masters-thesis"}
        assert {r[0] for r in con.execute("SELECT DISTINCT split FROM records")} == {"train"}
