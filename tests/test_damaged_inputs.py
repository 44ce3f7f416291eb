"""A damaged folder given as an input (a literature library, a reference library) is named as what it is, for
every command that reads it: never "a database file of the library ... run citefinder library repair", which
blames the user's own library and would send them to the wrong folder (issue 42 item 9). Nothing is written into
the damaged folder, nor into the user's library beyond what the command had already done."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.errors import LibraryDamagedError
from citefinder.sources.local import LocalLiterature
from tests.test_sources_local import DATA, build_literature, snapshot

GARBAGE = bytes(range(256)) * 40  # not an SQLite file


@pytest.fixture(scope="module")
def literature(tmp_path_factory) -> Path:
    return build_literature(tmp_path_factory.mktemp("lit") / "papers-lit")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)


def damaged(literature: Path, where: Path, file: str) -> Path:
    bad = where / "badlit"
    shutil.copytree(literature, bad)
    (bad / file).write_bytes(GARBAGE)
    return bad


def said_right(err: str, bad: Path, role: str) -> None:
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error: The {role} {bad} cannot be read: a database file in it is damaged"), line
    assert "A database file of the library" not in err and "run `citefinder library repair`" not in err
    assert "unexpected" not in err and "Traceback" not in err


@pytest.mark.parametrize("file", ["chroma/chroma.sqlite3", "pending.sqlite"])
def test_a_damaged_literature_library_is_named_by_enrich_and_fill(literature, tmp_path, capsys, monkeypatch, file):
    monkeypatch.chdir(tmp_path)
    bad = damaged(literature, tmp_path, file)
    before = snapshot(bad)
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "refs.bib", bib)
    draft = tmp_path / "d.tex"
    draft.write_text("The Transformer relies entirely on attention [CITATION].\n")

    assert main(["library", "enrich", "--from", str(bad), "--bib", str(bib)]) == 2
    said_right(capsys.readouterr().err, bad, "literature library")
    assert main(["fill", str(draft), "--bib", str(bib), "--literature", str(bad), "--literature-when", "always",
                 "-o", str(tmp_path / "out.tex")]) == 2
    said_right(capsys.readouterr().err, bad, "literature library")
    assert snapshot(bad) == before and not (tmp_path / "out.tex").exists()


def test_a_damaged_reference_library_is_named_by_check(literature, tmp_path, capsys):
    bad = damaged(literature, tmp_path, "chroma/chroma.sqlite3")
    before = snapshot(bad)
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "refs.bib", bib)
    draft = tmp_path / "d.tex"
    draft.write_text("The Transformer relies entirely on attention \\cite{vaswani2017}.\n")
    assert main(["check", str(draft), "--bib", str(bib), "--against", str(bad)]) == 2
    said_right(capsys.readouterr().err, bad, "reference library (--against)")
    assert snapshot(bad) == before


def test_the_literature_source_names_its_folder_when_a_query_meets_the_damage(literature, tmp_path):
    source = LocalLiterature.open(shutil.copytree(literature, tmp_path / "lit"))
    (tmp_path / "lit" / "chroma" / "chroma.sqlite3").write_bytes(GARBAGE)  # damaged after it was opened
    with pytest.raises(LibraryDamagedError, match="The literature library .*lit cannot be read"):
        source.get(["arxiv:1706.03762"])
