"""`citefinder check` (issue 21): every cited key of a real LaTeX draft judged against its sentence and
its .bib, on a real library (Chroma, bm25s, MiniLM) built from that .bib. tests/data/latex/checked.tex is
paper.tex with its citations written, one of them wrong: the sentence about BM25
cites ResNet."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citefinder.check.bib import DISAGREES, DUPLICATE, MISSING, UNCITED, UNKNOWN, bib_problems
from citefinder.check.draft import fix_project, parse_fixes
from citefinder.cli.main import main
from citefinder.errors import InputError
from citefinder.text.citations import find_citations
from citefinder.text.project import read_project
from citefinder.types import Paper

LATEX = Path(__file__).parent / "data" / "latex"
CHECKED = LATEX / "checked.tex"
WRONG_LINE = 33  # "Lexical ranking with the probabilistic relevance framework and BM25 ... \citep{He.Zhang.ea.2016}"


def test_every_cited_key_in_text_order_with_its_own_span():
    text = CHECKED.read_text(encoding="utf-8")
    cites = find_citations(text)
    assert len(cites) == 24  # 22 filled placeholders + the two keys paper.tex cited already
    assert [c.key for c in cites[:3]] == ["Vaswani.Shazeer.ea.2017", "Devlin.Chang.ea.2019", "Liu.Ott.Goyal.ea.2019"]
    assert all(text[c.start:c.end] == c.key for c in cites)
    multi = [c for c in cites if c.key in ("lecun2015deep", "goodfellow2016deep")]
    assert multi[0].group == multi[1].group and multi[0].others == ("goodfellow2016deep",)
    assert all("%" not in c.slot.sentence and "TODO" not in c.slot.context for c in cites)


def test_fix_replaces_only_the_chosen_citations(tmp_path):
    main_tex = tmp_path / "checked.tex"
    shutil.copy(CHECKED, main_tex)
    project = read_project(main_tex)
    wrong = next(i for i, c in enumerate(find_citations(project.text)) if c.key == "He.Zhang.ea.2016")
    (fixed,) = fix_project(project, parse_fixes([f"#{wrong + 1}=Robertson.Zaragoza.2009"])).values()
    original = project.text
    assert fixed.count("Robertson.Zaragoza.2009") == 1 and fixed.count("He.Zhang.ea.2016") == 1
    at = original.index("He.Zhang.ea.2016")
    assert fixed == original[:at] + "Robertson.Zaragoza.2009" + original[at + len("He.Zhang.ea.2016"):]
    every = fix_project(project, parse_fixes(["He.Zhang.ea.2016=he2016"]))[0]
    assert every.count("{he2016}") == 2
    with pytest.raises(InputError, match="OLDKEY=NEWKEY"):
        parse_fixes(["a b=c"])


def test_bib_hygiene():
    entries = {
        "vaswani2017": Paper("d1", "Attention Is All You Need", ("Ashish Vaswani",), 2017, key="vaswani2017"),
        "attention": Paper("d1x", "Attention is all you need", ("Ashish Vaswani",), 2017, key="attention"),
        "devlin2019": Paper("d2", "BERT: Pre-training of Deep Bidirectional Transformers", ("Jacob Devlin",), 2018,
                            key="devlin2019"),
        "unused": Paper("d3", "Deep Residual Learning for Image Recognition", ("Kaiming He",), 2016, key="unused"),
    }
    doc_of = {"vaswani2017": "d1", "attention": "d1", "devlin2019": "d2", "unused": "d3"}
    stored = {"d1": entries["vaswani2017"],
              "d2": Paper("d2", "BERT: Pre-training of Deep Bidirectional Transformers", ("Jacob Devlin",), 2019,
                          key="devlin"), "d3": entries["unused"]}
    problems = bib_problems(entries, ["vaswani2017", "devlin2019", "ghost2020", "attention"], doc_of, stored)
    kinds = {p.kind: p for p in problems}
    assert kinds[MISSING].keys == ("ghost2020",)
    assert kinds[UNCITED].keys == ("unused",)
    assert kinds[DUPLICATE].keys == ("vaswani2017", "attention")
    assert kinds[DISAGREES].keys == ("devlin2019",) and "year 2018 vs 2019" in kinds[DISAGREES].message
    assert UNKNOWN not in kinds


@pytest.mark.slow
def test_check_a_draft_flags_the_wrong_key_and_offers_the_right_one(tmp_path, capsys):
    tex, bib = tmp_path / "checked.tex", tmp_path / "refs.bib"
    shutil.copy(CHECKED, tex)
    shutil.copy(LATEX / "refs.bib", bib)
    out_json, out_md = tmp_path / "check.json", tmp_path / "check.md"
    code = main(["check", str(tex), "--bib", str(bib), "--json", str(out_json), "--markdown", str(out_md)])
    out = capsys.readouterr().out
    assert code == 1, out  # something is likely wrong: the exit code says so, for CI
    report = json.loads(out_json.read_text(encoding="utf-8"))
    records = report["citations"]
    assert [r["key"] for r in records] == [c.key for c in find_citations(CHECKED.read_text(encoding="utf-8"))]
    assert all({"key", "verdict", "probability", "line", "file", "alternatives", "rank"} <= set(r) for r in records)
    wrong = next(r for r in records if r["line"] == WRONG_LINE and r["key"] == "He.Zhang.ea.2016")
    assert wrong["verdict"] == "likely wrong", wrong
    assert wrong["alternatives"][0]["key"] == "Robertson.Zaragoza.2009"
    right = [r for r in records if r is not wrong]
    assert sum(r["verdict"] == "fits" for r in right) >= 0.8 * len(right)
    assert any(p["kind"] == "never cited" and "Robertson.Zaragoza.2009" in p["keys"] for p in report["bib"])
    md = out_md.read_text(encoding="utf-8")
    assert "## To look at" in md and "Robertson.Zaragoza.2009" in md
    assert "likely wrong" in out and "He.Zhang.ea.2016" in out  # the terminal table

    # the fix it suggests, written to a new file; the draft itself untouched
    number = records.index(wrong) + 1
    assert main(["check", str(tex), "--fix", f"#{number}=Robertson.Zaragoza.2009"]) == 0
    fixed = (tmp_path / "checked.fixed.tex").read_text(encoding="utf-8")
    assert tex.read_bytes() == CHECKED.read_bytes()
    original = CHECKED.read_text(encoding="utf-8")
    at = [i for i in range(len(original)) if original.startswith("He.Zhang.ea.2016", i)][0]
    assert fixed == original[:at] + "Robertson.Zaragoza.2009" + original[at + len("He.Zhang.ea.2016"):]


@pytest.mark.slow
def test_check_against_a_reference_library_flags_an_invented_entry(tmp_path, capsys):
    tex, bib = tmp_path / "checked.tex", tmp_path / "refs.bib"
    invented = ("@inproceedings{okafor2021sparse, title = {Sparse Prototype Alignment for Few-Shot Scene Parsing},"
                " author = {Okafor, N. and Lindqvist, A.}, booktitle = {CVPR}, year = {2021}}\n")
    text = CHECKED.read_text(encoding="utf-8").replace("\\citep{Ioffe.Szegedy.2015}",
                                                       "\\citep{Ioffe.Szegedy.2015,okafor2021sparse}")
    tex.write_text(text, encoding="utf-8")
    bib.write_text((LATEX / "refs.bib").read_text(encoding="utf-8") + invented, encoding="utf-8")
    reference = tmp_path / "reference"  # a library of the real papers only
    assert main(["library", "import", str(LATEX / "refs.bib"), "--library", str(reference)]) == 0
    capsys.readouterr()
    assert main(["check", str(tex), "--bib", str(bib), "--against", str(reference),
                 "--json", str(tmp_path / "c.json")]) == 1
    report = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    unknown = [p for p in report["bib"] if p["kind"] == UNKNOWN]
    assert [p["keys"] for p in unknown] == [["okafor2021sparse"]]
    assert "--json" not in capsys.readouterr().err
    # and an output over an input is refused
    assert main(["check", str(tex), "--bib", str(bib), "--json", str(bib)]) == 2


def test_keys_defined_twice_and_notes_after_a_replacement():
    from citefinder.check.bib import TWICE, defined_twice, refreshed

    (twice,) = defined_twice(["a", "b", "a", "c"])
    assert twice.kind == TWICE and twice.keys == ("a",) and "defined 2 times" in twice.message
    before = bib_problems({k: Paper(k, k.upper(), key=k) for k in ("a", "b", "c")}, ["a", "a", "ghost"], {}, {})
    assert {p.kind for p in before} == {MISSING, UNCITED}
    assert next(p for p in before if p.kind == UNCITED).keys == ("b", "c")
    after = refreshed(before + [twice], ["a", "b", "c"], ["a", "b", "c"])  # ghost replaced by c, one a by b
    assert [p.kind for p in after] == [TWICE]
