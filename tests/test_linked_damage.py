"""Item 9 of issue 27 through the CLI: a linked .bib with one broken entry keeps that paper (one line says which
entry could not be read), an unreadable links.json stops the command with a repair message (it never reads as
"no links"), and a draft's co-citation id is its resolved path (two projects' main.tex are two drafts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.cli.main import main

GOOD = ("@article{a2020,\n  title = {Alpha paper on sparse retrieval},\n  year = {2020}\n}\n\n"
        "@article{b2021,\n  title = {Beta paper on neural ranking},\n  year = {2021}\n}\n\n"
        "@article{c2022,\n  title = {Gamma paper on web search},\n  year = {2022}\n}\n")


@pytest.mark.slow
def test_a_broken_entry_keeps_its_paper_and_an_unreadable_link_state_stops(tmp_path, capsys):
    bib, lib = tmp_path / "refs.bib", str(tmp_path / "lib")
    bib.write_text(GOOD, encoding="utf-8")
    assert main(["library", "link", str(bib), "--library", lib]) == 0
    capsys.readouterr()
    bib.write_text(GOOD.replace("neural ranking},", "neural ranking,"), encoding="utf-8")  # one unclosed brace
    from citefinder.config import Settings
    from citefinder.library.link import open_library
    from citefinder.library.store import Library

    assert open_library(Settings(library=lib)).count() == 3  # any command syncs: b2021 is kept
    assert main(["library", "link", str(bib), "--library", lib]) == 0
    out, _ = capsys.readouterr()
    assert "b2021" in out and "could not be read" in out
    assert Library.open(Settings(library=lib)).by_key("b2021") is not None

    (Path(lib) / "links.json").write_text("{broken", encoding="utf-8")
    assert main(["library", "stats", "--library", lib]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "links.json cannot be read" in err[0] and "Move it aside" in err[0]
    assert (Path(lib) / "links.json").read_text(encoding="utf-8") == "{broken"  # never rewritten


def test_the_co_citation_id_of_a_draft_is_its_file_name_as_on_the_cite_page(tmp_path):
    from citefinder.cli.fill import draft_name
    from citefinder.text.project import read_project

    names = []
    for folder in ("paper-a", "paper-b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "main.tex").write_text(f"Text of {folder} [CITATION].\n", encoding="utf-8")
        names.append(draft_name(read_project(tmp_path / folder / "main.tex")))
    # one identity for both faces (issue 48): the file's name, as the Cite page names the same file uploaded
    assert names == ["draft:main.tex", "draft:main.tex"]
