"""`citefinder fill paper.tex --literature LIBRARY --add-from-literature ...` end to end: real .bib, real Chroma,
bm25s and MiniLM for the user's library, a real literature library folder beside it. The papers not in the
library are listed under each slot; the ones the user adds go to new-references.bib in the user's key style
and are cited in the filled draft; refs.bib and the literature folder stay byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from literature_support import only_theirs, own_records, snapshot

from citefinder.cli.main import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("literature_cache")]


def _surname(r: dict) -> str:
    return r["authors"][0].split()[-1]


def _project(folder: Path, records: list[dict]) -> tuple[Path, Path]:
    """paper.tex with two placeholders (one names a paper only the literature has, one a paper of refs.bib) and
    refs.bib of the user's papers keyed ``Surname:Year``."""
    entries = [f"@article{{{_surname(r)}:{r['year']},\n  title = {{{r['title']}}},\n  author = "
               f"{{{' and '.join(r['authors'])}}},\n  year = {{{r['year']}}}\n}}\n" for r in own_records(records)]
    bib = folder / "refs.bib"
    bib.write_text("\n".join(entries), encoding="utf-8")
    tex = folder / "paper.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n"
                   f"We follow {records[only_theirs(records)]['title'].lower()} \\citep{{?}}.\n"
                   f"Our method extends {records[1]['title'].lower()} \\cite{{?}}.\n"
                   "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    return tex, bib


def test_fill_lists_the_literature_and_adds_the_papers_the_user_picks(tmp_path, capsys, monkeypatch, literature,
                                                                        records):
    # about adding literature papers, not the threshold: fill at a fixed 0.55, whatever the shipped default
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    tex, bib = _project(tmp_path, records)
    bib_bytes, lit_before = bib.read_bytes(), snapshot(literature)
    target = records[only_theirs(records)]
    key = f"{_surname(target)}:{target['year']}"  # the user's own style

    # listed under the slot (the shipped priors may reorder them: find where the named paper is)
    assert main(["fill", str(tex), "--literature", str(literature), "--literature-when", "always",
                 "--json", str(tmp_path / "r.json")]) == 0
    out, _ = capsys.readouterr()
    rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    offered = rows[0]["literature"]
    n = next(i for i, c in enumerate(offered, 1) if c["paper"]["doc_id"] == target["doc_id"])
    assert n <= 5 and offered[n - 1]["paper"]["key"] == key and offered[n - 1]["in_library"] is False
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Slot 1 ("))
    assert lines[first + 1] == f"  not in your library ({literature.name}):"
    assert lines[first + 1 + n].startswith(f"    {n}. {key} {target['title']} ({target['year']})")
    assert not (tmp_path / "new-references.bib").exists()  # nothing added unless asked

    assert main(["fill", str(tex), "--literature", str(literature), "--literature-when", "always",
                 "--add-from-literature", f"1:{n}"]) == 0
    out, _ = capsys.readouterr()
    assert f"Slot 1 (line 3): \\citep{{{key}}}  {target['title']}" in out
    assert "added 1 paper from the literature" in out

    assert bib.read_bytes() == bib_bytes  # the user's .bib is never written
    assert snapshot(literature) == lit_before  # nor the literature library
    new = (tmp_path / "new-references.bib").read_text(encoding="utf-8")
    assert new.startswith(f"@misc{{{key},") and f"eprint = {{{target['arxiv_id']}}}" in new
    filled = (tmp_path / "paper.cited.tex").read_text(encoding="utf-8")
    assert f"\\citep{{{key}}}" in filled  # the added paper is cited
    second_key = f"{_surname(records[1])}:{records[1]['year']}"
    assert f"\\cite{{{second_key}}}" in filled  # the user's own paper, as before

    # the --json file lists each slot's literature; mark another one and give it back
    other_at = 1 if n != 1 else 2
    offered[other_at - 1]["add"] = True
    (tmp_path / "picked.json").write_text(json.dumps(rows), encoding="utf-8")
    assert main(["fill", str(tex), "--add-from-literature", str(tmp_path / "picked.json"),
                 "--new-references", str(tmp_path / "more.bib"), "-o", str(tmp_path / "again.tex")]) == 0
    capsys.readouterr()
    other = offered[other_at - 1]["paper"]["key"]
    assert (tmp_path / "more.bib").read_text(encoding="utf-8").startswith(f"@misc{{{other},")
    assert f"\\citep{{{other}}}" in (tmp_path / "again.tex").read_text(encoding="utf-8")
    assert bib.read_bytes() == bib_bytes and snapshot(literature) == lit_before


def test_adding_needs_the_literature_and_never_writes_over_the_users_bib(tmp_path, capsys, literature, records):
    tex, bib = _project(tmp_path, records)
    assert main(["fill", str(tex), "--add-from-literature", "1:1"]) == 2
    assert "give --literature LIBRARY too" in capsys.readouterr().err
    assert main(["fill", str(tex), "--literature", str(literature), "--add-from-literature", "1:1",
                 "--new-references", str(bib)]) == 2
    assert "your bibliography" in capsys.readouterr().err
    assert main(["fill", str(tex), "--literature", str(literature), "--add-from-literature", "one"]) == 2
    assert "SLOT:RANK" in capsys.readouterr().err
    assert not (tmp_path / "paper.cited.tex").exists() and not (tmp_path / "new-references.bib").exists()


@pytest.mark.parametrize("bib", [False, True])
def test_new_references_never_writes_over_a_file_of_the_project(tmp_path, capsys, bib):
    """The data-safety matrix of tests/test_write_safety.py for --new-references: every file of a LaTeX project
    (main, \\input file, Latin-1, read-only, 0600, the .bib, a symlink and a hard link to it, a folder) is refused
    in one line before any work, and every file keeps its bytes and mode."""
    from test_write_safety import TARGETS, _project, _refused, _snapshot

    main_tex = _project(tmp_path)
    before = _snapshot(tmp_path)
    extra = ["--bib", str(tmp_path / "refs.bib")] if bib else ["--bib-out", str(tmp_path / "out.bib")]
    for target in TARGETS:
        _refused(capsys, ["fill", str(main_tex), "--literature", str(tmp_path / "no-such-literature"),
                          "--add-from-literature", "1:1", "--new-references", str(tmp_path / target), *extra,
                          "--library", str(tmp_path / "lib")])
        assert _snapshot(tmp_path) == before, target
