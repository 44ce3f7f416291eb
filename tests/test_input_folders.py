"""An input folder is never an output (issue 42, item 1): a folder a command reads papers from (``fill --literature``,
``check --against``, ``library enrich --from``, the ``literature`` setting) is an input whatever the flags, like the
library folder. The CLI is walked as tests/test_one_writer.py walks it for files: every option naming a folder is
filed below (a new one fails the test until it is), and every output option of a command that takes a protected
folder is pointed inside that folder, with and without ``--force``: refused in one line, nothing written there
(not even the ``.citefinder-written.json`` record)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from test_one_writer import OUTPUTS, _argv, _inputs, _options, _refused, _state

from citefinder.cli.outputs import FOLDER_INPUTS, input_folders

# Options naming a folder (or a model, or a name) that are not the folders of papers FOLDER_INPUTS protects, and why.
OTHER_FOLDERS = {
    "library": "the library folder: every plan protects it (protect_folder), run in tests/test_one_writer.py",
    "embedder": "a model name or folder, read into the cache; never an output's place",
    "reranker": "a model name or folder, read into the cache; never an output's place",
    "target": "a model adopted into the library (embedder/reranker use); the command writes the library only",
    "drafts": "eval's folder of drafts: each of its files is protected one by one (OWN_INPUT, 'drafts gold')",
    "papers": "eval: names of paper folders, not a path",
    "bib": "eval: the .bib file name inside each paper folder, not a path",
    "paths": "contexts import: files read into the library's memory; the command writes the library only",
    "contexts": "embedder train: files read (tests/test_one_writer.py OWN_INPUT)",
    "query_only": "a switch",
}


def _names_a_folder(action: argparse.Action) -> bool:
    words = f"{action.help or ''} {action.metavar or ''}".lower()
    return "folder" in words or "dir" in str(action.metavar or "").lower() or "library" in str(action.metavar or
                                                                                                "").lower()


def test_every_option_naming_a_folder_is_filed():
    found = {a.dest for key, a in _options() if _names_a_folder(a) and key not in OUTPUTS}
    unfiled = found - set(FOLDER_INPUTS) - set(OTHER_FOLDERS)
    assert not unfiled, f"new folder options: add each to FOLDER_INPUTS (cli/outputs.py) or to OTHER_FOLDERS: {unfiled}"
    assert set(FOLDER_INPUTS) <= found, set(FOLDER_INPUTS) - found  # none stale
    assert not set(FOLDER_INPUTS) & set(OTHER_FOLDERS)


def _protected() -> list[tuple[str, str]]:
    """(command, option) of every FOLDER_INPUTS option the CLI has."""
    return sorted({(key.rsplit(" ", 1)[0], a.option_strings[0]) for key, a in _options()
                   if a.dest in FOLDER_INPUTS and a.option_strings})


def _literature_folder(root: Path) -> Path:
    """A folder laid out as a library (its manifest and store are what a write would break); refused before any
    work, so it need not open."""
    folder = root / "lit"
    (folder / "chroma").mkdir(parents=True)
    (folder / "library.json").write_text('{"version": 1}\n')
    (folder / "chroma" / "chroma.sqlite3").write_bytes(b"SQLite format 3\x00")
    return folder


def test_the_protected_folders_are_the_commands_folder_options():
    assert _protected() == [("check", "--against"), ("fill", "--literature"), ("library enrich", "--from")]


@pytest.mark.parametrize("command,option", _protected())
def test_every_output_of_a_command_is_refused_inside_its_input_folder(tmp_path, capsys, monkeypatch, command, option):
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)
    p = _inputs(tmp_path)
    lit = _literature_folder(tmp_path)
    outputs = [k for k in OUTPUTS if k.rsplit(" ", 1)[0] == command]
    assert outputs, command
    forced = f"{command} --force" in {k for k, _ in _options()}
    before = _state(tmp_path)
    for key in outputs:
        _, template = OUTPUTS[key]
        for inside in (lit / "library.json", lit / "chroma" / "chroma.sqlite3", lit / "new.json"):
            for extra in ([], ["--force"]) if forced else ([],):
                _refused(capsys, _argv(template, p, inside, option, str(lit), *extra))
                assert _state(tmp_path) == before, (key, inside, extra)
    assert not (lit / ".citefinder-written.json").exists()


@pytest.mark.parametrize("key", ["fill --json", "fill -o", "fill --bib-out", "library enrich --json"])
def test_the_literature_setting_is_an_input_of_every_command_that_reads_it(tmp_path, capsys, monkeypatch, key):
    p = _inputs(tmp_path)
    lit = _literature_folder(tmp_path)
    monkeypatch.setenv("CITEFINDER_LITERATURE", str(lit))
    before = _state(tmp_path)
    _, template = OUTPUTS[key]
    line = _refused(capsys, _argv(template, p, lit / "out.json"))
    assert "the literature setting's library" in line and "read only" in line
    assert _state(tmp_path) == before


def test_a_service_name_is_no_folder_and_a_folder_is_one_whatever_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(literature="openalex", against=None, source=None)
    assert input_folders(args) == []  # no folder of that name here: an online source, nothing to protect
    (tmp_path / "openalex").mkdir()
    assert input_folders(args) == [("the literature library", tmp_path / "openalex")]  # a folder is protected
    settings = argparse.Namespace(literature=str(tmp_path / "openalex"))
    assert len(input_folders(args, settings)) == 1  # the same folder once
