"""A literature library built from the dumps (issue 36): the dump import into a real library (Chroma on disk,
BM25, the pending queue; BM25 first, so no model runs), filters counted, the Semantic Scholar join, duplicates
across dumps, resume after an interruption, and the CLI end to end."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from dumps_support import ARXIV, OA_NAME, OPENALEX, S2_ABSTRACTS, S2_PAPERS

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.errors import ImportInterrupted, InputError
from citefinder.library import dumps
from citefinder.library.dumps import DumpFilter, import_dumps
from citefinder.library.formats.lines import START, Position
from citefinder.library.resume import FILE, ProgressBook, Tracker
from citefinder.library.store import Library
from citefinder.types import Paper

ALL = [ARXIV, OPENALEX, S2_PAPERS, S2_ABSTRACTS]


def _copy(tmp_path: Path, *files: Path) -> list[Path]:
    """The fixtures copied (a test that changes or times a file must not touch the repository's)."""
    out = []
    for f in files:
        target = tmp_path / "dumps" / f.parent.name / f.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
        out.append(target)
    return out


def _library(tmp_path: Path, name: str = "lib") -> Library:
    return Library.open(Settings(library=tmp_path / name))


def test_dumps_import_counts_dedupes_across_dumps_and_joins_s2_abstracts(tmp_path):
    lib = _library(tmp_path)
    result = import_dumps(lib, _copy(tmp_path, *ALL), defer_embedding=True)
    counts = {f.name: (f.format, f.read, f.kept, f.filtered, f.failed) for f in result.files}
    assert counts == {
        S2_ABSTRACTS.name: ("s2-abstracts", 10, 10, 0, 0),
        ARXIV.name: ("arxiv", 27, 23, 0, 4),
        OA_NAME: ("openalex", 17, 16, 0, 1),
        S2_PAPERS.name: ("s2", 11, 10, 0, 1),
    }
    # the Transformer from arXiv (twice), OpenAlex and S2 is one paper; BERT from arXiv, OpenAlex and S2 too
    assert result.report.duplicates == 5 and lib.count() == 23 + 16 + 10 - 5
    attention = lib.get(["arxiv:1706.03762"])[0]
    assert attention.source == ARXIV.name and attention.abstract.startswith("The dominant sequence")
    assert lib.match(Paper(doc_id="doi:10.18653/v1/n19-1423", title="BERT", doi="10.18653/v1/n19-1423")) \
        == "arxiv:1810.04805"
    # Semantic Scholar papers got their abstracts by corpus id (a later line for the same id wins)
    by_title = {p.title: p for p in lib.browse(0, 100)}
    assert by_title["Echocardiography screening in rural clinics"].abstract.startswith("Handheld echocardiography")
    assert by_title["Echocardiography screening in rural clinics"].ids == (("s2", "100001"), ("pmid", "25551234"))
    assert by_title["Spectral methods for $\\lambda$-calculus normalisation"].abstract.startswith("Eigenvalues")
    assert by_title["A paper the abstracts dataset does not cover"].abstract == ""
    assert by_title["Cardiac magnetic resonance in heart failure"].ids == (("openalex", "W3005"), ("pmid", "29912345"))
    assert not (lib.path / dumps.ABSTRACTS_TABLE).exists()  # the join table goes once the import ends
    assert lib.bm25_search("handheld echocardiography villagers", 1)[0].doc_id == \
        by_title["Echocardiography screening in rural clinics"].doc_id
    assert len(result.report.failures) == 6 and all(":" in f.source for f in result.report.failures)


def test_filters_keep_categories_and_years_and_count_the_rest(tmp_path):
    lib = _library(tmp_path)
    arxiv_file, openalex_file, s2_file = _copy(tmp_path, ARXIV, OPENALEX, S2_PAPERS)
    result = import_dumps(lib, [arxiv_file], filters=DumpFilter(("cs.CL", "stat.*"), (2015, 2019)),
                          defer_embedding=True)
    kept = {p.doc_id for p in lib.browse(0, 100)}
    # cs.CL or stat.*, 2015-2019: the Transformer (2017), BERT (2018), the l1 bridges (stat.ML 2016)
    assert kept == {"arxiv:1706.03762", "arxiv:1810.04805", "arxiv:1602.01234"}
    f = result.files[0]
    assert (f.read, f.kept, f.failed, f.read - f.kept - f.failed) == (27, 4, 4, f.filtered)  # 4 kept: one duplicate
    lib2 = _library(tmp_path, "lib2")
    import_dumps(lib2, [openalex_file, s2_file], filters=DumpFilter(("Medicine",)), defer_embedding=True)
    assert sorted(p.title for p in lib2.browse(0, 100)) == [
        "Cardiac magnetic resonance in heart failure", "Echocardiography screening in rural clinics",
        "Statins and cardiovascular outcomes"]


def test_a_file_that_is_no_dump_is_named(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={T}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="refs.bib is not a dump"):
        import_dumps(_library(tmp_path), [bib])


def _big_arxiv(path: Path, n: int) -> Path:
    lines = [json.dumps({"id": f"2101.{i:05d}", "title": f"Synthetic paper number {i} on topic {i % 7}",
                         "abstract": f"Words for paper {i}.", "categories": "cs.LG" if i % 3 else "math.ST",
                         "versions": [{"version": "v1", "created": "Fri, 1 Jan 2021 00:00:00 GMT"}],
                         "authors_parsed": [[f"Author{i % 50}", "A.", ""]]})
             for i in range(1, n + 1)]
    lines.insert(40, "{broken")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _interrupt_after(monkeypatch, n: int) -> None:
    """Ctrl-C once the import has read ``n`` records (as a user's would land while records are read)."""
    real = dumps.positioned_records

    def reading(path, start=START):
        for i, item in enumerate(real(path, start), start=1):
            if i > n:
                raise KeyboardInterrupt
            yield item

    monkeypatch.setattr(dumps, "positioned_records", reading)


def test_an_interrupted_import_resumes_where_it_stopped_with_the_same_library(tmp_path, monkeypatch, capsys):
    import citefinder.library.store.writes as writes

    monkeypatch.setattr(writes, "WRITE_BATCH", 16)
    monkeypatch.setattr(dumps, "ADVANCE_EVERY", 10)
    big = _big_arxiv(tmp_path / "arxiv-metadata-oai-snapshot.json", 300)
    once = _library(tmp_path, "once")
    import_dumps(once, [big], filters=DumpFilter(("cs.*",)), defer_embedding=True)

    lib = _library(tmp_path)
    _interrupt_after(monkeypatch, 137)
    with pytest.raises(ImportInterrupted, match=r"resumes at record \d+ of arxiv-metadata-oai-snapshot.json") as e:
        import_dumps(lib, [big], filters=DumpFilter(("cs.*",)), defer_embedding=True)
    stored = e.value.report.added
    mark = ProgressBook(lib.path).marks[str(big.resolve())]
    # settled up to the last written batch: what is read again is less than one batch (16 papers are 24 records
    # here: every third record is math.ST, filtered out)
    assert not mark.done and 137 - 24 <= mark.record <= 137
    assert lib.count() == stored > 0

    monkeypatch.undo()
    monkeypatch.setattr(writes, "WRITE_BATCH", 16)
    said: list[str] = []
    lib = _library(tmp_path)
    result = import_dumps(lib, [big], filters=DumpFilter(("cs.*",)), defer_embedding=True, say=said.append)
    assert said == [f"resuming at record {mark.record + 1:,} of {big.name}"]
    f = result.files[0]
    assert f.started_at == mark.record + 1 and f.read == 301 - mark.record  # nothing before it read again
    # read again beyond the last written batch: at most one batch of kept papers, duplicates of stored ones
    assert result.report.duplicates <= writes.WRITE_BATCH
    assert {p.doc_id for p in lib.browse(0, 1000)} == {p.doc_id for p in once.browse(0, 1000)}
    assert lib.count() == once.count() == 200 and lib.pending_count() == 200
    assert ProgressBook(lib.path).marks[str(big.resolve())].done

    # a third run skips the file; --restart reads it again (all duplicates)
    again = import_dumps(_library(tmp_path), [big], filters=DumpFilter(("cs.*",)), defer_embedding=True)
    assert again.files[0].skipped and again.files[0].read == 0 and again.report.added == 0
    restarted = import_dumps(_library(tmp_path), [big], filters=DumpFilter(("cs.*",)), defer_embedding=True,
                             restart=True)
    assert restarted.files[0].read == 301 and restarted.report.duplicates == 200


def test_other_filters_or_a_changed_file_read_it_from_the_start(tmp_path, monkeypatch):
    big = _big_arxiv(tmp_path / "snap.json", 60)
    lib = _library(tmp_path)
    _interrupt_after(monkeypatch, 30)
    with pytest.raises(ImportInterrupted):
        import_dumps(lib, [big], defer_embedding=True)
    monkeypatch.undo()
    said: list[str] = []
    result = import_dumps(_library(tmp_path), [big], filters=DumpFilter(years=(2020, 2022)), defer_embedding=True,
                          say=said.append)
    assert "read with other options" in said[0] and result.files[0].started_at == 1
    stat = big.stat()
    os.utime(big, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    said.clear()
    result = import_dumps(_library(tmp_path), [big], filters=DumpFilter(years=(2020, 2022)), defer_embedding=True,
                          say=said.append)
    assert "changed since it was last read" in said[0] and result.files[0].read == 61


class _Store:
    """What the tracker asks of a library: which papers it matches."""

    def __init__(self) -> None:
        self.stored: set[str] = set()

    def match(self, paper: Paper) -> str | None:
        return paper.doc_id if paper.doc_id in self.stored else None


def test_tracker_settles_in_order_skips_failed_papers_and_crosses_files(tmp_path):
    files = [tmp_path / "a.json", tmp_path / "b.json"]
    for f in files:
        f.write_text("{}\n", encoding="utf-8")
    book = ProgressBook(tmp_path)
    for f in files:
        book.start(f, "arxiv", "any")
    store = _Store()
    tracker = Tracker(store, book, files)

    def read(file: int, n: int, paper: str | None) -> None:
        tracker.read(file, Position(n - 1, (n - 1) * 10), Position(n, n * 10),
                     Paper(doc_id=paper, title=paper) if paper else None)

    for n, doc in enumerate(["p1", None, "p2", "p3", "p4"], start=1):  # record 2 filtered out
        read(0, n, doc)
    store.stored |= {"p1", "p2"}
    tracker.advance()
    assert (book.marks[str(files[0].resolve())].record, book.marks[str(files[0].resolve())].offset) == (3, 30)
    store.stored |= {"p4"}  # p3 failed in its batch; p4 after it was stored
    tracker.advance()
    assert book.marks[str(files[0].resolve())].record == 5
    read(1, 1, "q1")
    read(1, 2, "q2")
    store.stored |= {"q1"}
    tracker.advance()
    first, second = (book.marks[str(f.resolve())] for f in files)
    assert first.done and (second.record, second.done) == (1, False)
    assert json.loads((tmp_path / FILE).read_text())["files"][str(files[1].resolve())]["record"] == 1
    assert tracker.resume_point() == (files[1], 2)
    # a duplicate of a stored paper (matched as it is read), or a second paper with an unsettled one's id, proves
    # nothing about the papers read before it: q2 stays unsettled until a paper after it is stored as itself
    read(1, 3, "p1")
    read(1, 4, "q2")
    store.stored |= {"q2"}
    tracker.advance()
    assert book.marks[str(files[1].resolve())].record == 3
    read(1, 5, "q5")
    store.stored |= {"q5"}
    tracker.advance()
    assert book.marks[str(files[1].resolve())].record == 5 and not tracker.unsettled
    tracker.finish()
    assert all(m.done for m in ProgressBook(tmp_path).marks.values())


def test_cli_imports_a_dump_then_stats_and_search_find_it(tmp_path, capsys):
    lib = str(tmp_path / "lib")
    files = [str(p) for p in _copy(tmp_path, ARXIV, OPENALEX, S2_PAPERS, S2_ABSTRACTS)]
    assert main(["--library", lib, "library", "import", *files, "--defer-embedding", "--category", "cs.CL,Medicine",
                 "--years", "2015-"]) == 0
    out = capsys.readouterr().out
    assert "arxiv-metadata-oai-snapshot.json (arxiv): read 27 records, kept 4, filtered out 19, failed 4" in out
    assert "failed: arxiv-metadata-oai-snapshot.json:13: line 13 is not valid JSON" in out
    assert "await dense vectors" in out
    assert main(["--library", lib, "library", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["papers"] == stats["awaiting_vectors"] == 5  # 3 arXiv (one twice), 1 OpenAlex, 1 S2
    assert main(["--library", lib, "library", "search", "masked language representation", "-k", "1", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out)[0]
    assert hit["doc_id"] == "arxiv:1810.04805" and hit["doi"] == "10.18653/v1/n19-1423"
    assert main(["--library", lib, "library", "import", *files, "--defer-embedding", "--category", "cs.CL,Medicine",
                 "--years", "2015-"]) == 0
    assert "imported whole before, skipped" in capsys.readouterr().out


def test_cli_sniffs_a_dump_without_options_and_leaves_bib_imports_alone(tmp_path, capsys):
    lib = str(tmp_path / "lib")
    (snap,) = _copy(tmp_path, ARXIV)
    assert main(["--library", lib, "library", "import", str(snap), "--defer-embedding"]) == 0
    assert "(arxiv): read 27 records, kept 23" in capsys.readouterr().out
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{vaswani2017, title={Attention Is All You Need}, year={2017}}\n", encoding="utf-8")
    assert main(["--library", lib, "library", "import", str(bib), "--defer-embedding"]) == 0
    out = capsys.readouterr().out
    assert "records" not in out and "added 0, updated 1 (vaswani2017)" in out
    assert main(["--library", lib, "library", "import", str(bib), "--years", "2015-"]) == 2
    assert "refs.bib is not a dump" in capsys.readouterr().err


def test_ctrl_c_while_the_index_is_rebuilt_at_the_end_still_says_where_to_resume(tmp_path, monkeypatch):
    (snap,) = _copy(tmp_path, ARXIV)
    lib = _library(tmp_path)

    def ctrl_c(**_):
        raise KeyboardInterrupt

    monkeypatch.setattr(lib, "_commit", ctrl_c)  # every paper is stored, the BM25 rebuild is stopped
    resumes = f"run the same command again; the next run resumes at record 28 of {snap.name}"
    with pytest.raises(ImportInterrupted, match=resumes):
        import_dumps(lib, [snap], defer_embedding=True)
    monkeypatch.undo()
    again = _library(tmp_path)  # the folder is repaired on opening (its manifest says a write did not finish)
    result = import_dumps(again, [snap], defer_embedding=True)
    assert (result.files[0].started_at, result.files[0].read, again.count()) == (28, 0, 22)
    assert again.bm25_search("Transformer attention recurrence", 1)[0].doc_id == "arxiv:1706.03762"
    assert ProgressBook(again.path).marks[str(snap.resolve())].done


def test_progress_is_saved_through_long_runs_of_filtered_out_records(tmp_path, monkeypatch):
    monkeypatch.setattr(dumps, "ADVANCE_EVERY", 2)  # a save every 2 papers kept, or every 128 records read
    big = _big_arxiv(tmp_path / "snap.json", 300)
    lib = _library(tmp_path)
    saved: list[int] = []
    real = Tracker.advance

    def advance(self):
        real(self)
        saved.append(self.book.marks[str(big.resolve())].record)

    monkeypatch.setattr(Tracker, "advance", advance)
    _interrupt_after(monkeypatch, 200)
    with pytest.raises(ImportInterrupted, match="resumes at record 201 of snap.json"):
        import_dumps(lib, [big], filters=DumpFilter(("q-bio",)), defer_embedding=True)  # keeps none
    assert saved == [128, 200]  # while reading (a kill after it reads again from record 129), and when stopped
