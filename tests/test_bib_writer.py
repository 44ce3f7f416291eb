"""Every entry CiteFinder writes is read right by BibTeX (issue 51, items 1-2; issue 50, item 4): a fixture of hostile
literature records (tests/data/bibwriter/hostile-records.jsonl: "et al.", "others", corporate authors, math, braces,
CJK, accents, ``&``, ``%``), imported as a literature would be, written by the one writer, then parsed by bibtexparser
v2 and by TeX Live's ``bibtex`` itself (plain and abbrv styles), with the authors as BibTeX reads them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import bibtexparser
import pytest
from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.bibtext import escape_latex, latex_text, latex_title
from citefinder.library.readers import read_papers
from citefinder.types import Paper

FIXTURE = Path(__file__).parent / "data" / "bibwriter" / "hostile-records.jsonl"
USERS = ("@misc{Muller2020Ranking,\n  title = {Another ranking paper},\n  author = {M{\\\"u}ller, Anna},\n"
         "  year = {2020}\n}\n")


def _records() -> dict[str, dict]:
    return {r["doc_id"]: r for r in map(json.loads, FIXTURE.read_text(encoding="utf-8").splitlines())}


def _written() -> tuple[str, dict[str, str]]:
    papers = [p for p in read_papers(FIXTURE) if isinstance(p, Paper)]
    assert len(papers) == len(_records())
    return papers_to_bibtex(papers, taken={"Muller2020Ranking"})  # the user's .bib holds that key


def _entries(bib: str) -> dict[str, bibtexparser.model.Entry]:
    library = bibtexparser.parse_string(bib)
    assert library.failed_blocks == []
    return {e.key: e for e in library.entries}


def _names(author: str) -> list:
    return [parse_single_name_into_parts(n) for n in split_multiple_persons_names(author)]


def test_every_entry_parses_with_bibtexparser_with_the_authors_bibtex_reads():
    bib, keys = _written()
    entries = _entries(bib)
    for doc_id, record in _records().items():
        entry, expect = entries[keys[doc_id]], record["expect"]
        names = _names(entry["author"])
        people = [n for n in names if n.last != ["others"]]
        assert "et al" not in entry["author"], entry["author"]  # never a person called "et al."
        if expect.get("others"):
            assert names[-1].last == ["others"] and not names[-1].first, entry["author"]
        else:
            assert "others" not in entry["author"].split(" and "), entry["author"]
        if "corporate" in expect:  # one name, braced whole: never "Research, Google"
            assert "{" + expect["corporate"] + "}" in [" ".join(n.last) for n in names if not n.first], entry["author"]
        for last in expect.get("persons", []):
            assert last in [" ".join(n.last) for n in people], (last, entry["author"])
        for text in expect.get("math", []) + expect.get("title_has", []):
            assert text in entry["title"], (text, entry["title"])
        for text in expect.get("title_lacks", []):
            assert text not in entry["title"], (text, entry["title"])
        assert "\\textbraceleft{}BERT" not in entry["title"]
        if expect.get("key_not_digits"):
            assert re.search(r"[A-Za-z]", keys[doc_id]) and not keys[doc_id][:1].isdigit(), keys[doc_id]


def test_the_writer_keeps_math_and_braces_and_writes_unicode_as_latex():
    assert latex_title("On the $\\alpha$-divergence") == "On the $\\alpha$-divergence"
    assert latex_title("α-entmax") == "$\\alpha$-entmax"  # pdflatex + inputenc rejects a bare α
    assert latex_text("αβ ≤ x") == "$\\alpha \\beta$ $\\leq$ x"
    assert latex_title("{BERT} rediscovers") == "{BERT} rediscovers"  # the record's braces: case protection
    assert latex_title("Costs of $5 and $10") == "Costs of \\$5 and \\$10"  # dollars, not math
    assert latex_text("Schr\\\"odinger") == "Schr{\\\"o}dinger"  # a LaTeX accent read, written the writer's way
    assert latex_text("$\\input{/etc/passwd}$").startswith("\\$\\textbackslash{}input")  # never kept as math
    assert latex_text("a {b") == "a \\textbraceleft{}b"  # an unmatched brace is a literal one
    assert escape_latex("{x} & 5% #1 a_b") == "\\textbraceleft{}x\\textbraceright{} \\& 5\\% \\#1 a\\_b"
    assert latex_text("{" * 40 + "Q" + "}" * 40).count("Q") == 1  # deep nesting: no recursion error


def test_keys_are_unique_ignoring_case_and_never_only_digits():
    bib, keys = _written()
    written = list(_entries(bib))
    folded = [k.casefold() for k in [*written, "Muller2020Ranking"]]
    assert len(folded) == len(set(folded))  # BibTeX compares keys ignoring case
    assert keys["h:others-list"] == "muller2020rankinga"  # beside the user's Muller2020Ranking
    assert keys["h:cjk"] == "paper2021" and keys["h:cjk-latin-title"] == "paper2021deep"
    assert keys["h:corp-braced"] == "google2023gemini"  # an organisation's first word, not "research"


def _bibtex(tmp_path: Path, bib: str, style: str) -> tuple[str, str]:
    (tmp_path / "x.bib").write_text(bib, encoding="utf-8")
    (tmp_path / "x.aux").write_text(f"\\citation{{*}}\n\\bibdata{{x}}\n\\bibstyle{{{style}}}\n", encoding="utf-8")
    run = subprocess.run(["bibtex", "x"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    log = run.stdout + run.stderr + (tmp_path / "x.blg").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log
    return (tmp_path / "x.bbl").read_text(encoding="utf-8", errors="replace"), log


def _bbl_items(bbl: str) -> dict[str, str]:
    parts = re.split(r"\\bibitem(?:\[[^\]]*\])?\{([^}]*)\}", bbl)
    return {parts[i]: " ".join(parts[i + 1].split()) for i in range(1, len(parts), 2)}


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="TeX Live's bibtex is not installed (Debian "
                    "texlive-binaries + texlive-base; scripts/test.sh installs them)")
@pytest.mark.parametrize("style", ["plain", "abbrv"])
def test_real_bibtex_reads_every_entry_without_a_warning(tmp_path, style):
    bib, keys = _written()
    bbl, log = _bibtex(tmp_path, USERS + "\n" + bib, style)
    assert "Warning--" not in log and "error message" not in log, log  # no repeated key, no bad name, no brace
    items = _bbl_items(bbl)
    assert set(items) == {*keys.values(), "Muller2020Ranking"}
    for doc_id, record in _records().items():
        item = items[keys[doc_id]]
        if record["expect"].get("others"):
            assert "et~al." in item, item
    # an organisation is one name: abbrv abbreviates a person's given names, never "G.~Research"
    assert items[keys["h:corp-braced"]].startswith("{Google Research}."), items[keys["h:corp-braced"]]
    assert items[keys["h:corp-named"]].startswith("{Google DeepMind} and "), items[keys["h:corp-named"]]
    assert items[keys["h:specials"]].startswith("{Johnson \\& Johnson} and "), items[keys["h:specials"]]
    accents = items[keys["h:accents"]]
    if style == "abbrv":  # a special character is one letter when a given name is abbreviated
        assert accents.startswith("J.~M{\\\"u}ller, {\\'E}.~Zola, B.~O{\\u{g}}uz, {\\L}.~Kaiser"), accents
    else:
        assert accents.startswith("J{\\\"o}rg M{\\\"u}ller, {\\'E}mile Zola, Barlas O{\\u{g}}uz"), accents
    assert "$\\alpha$" in items[keys["h:math"]] and "$\\mathcal{O}(n^2)$" in items[keys["h:math"]]
    assert "{BERT}" in items[keys["h:braces"]]
    assert items[keys["h:suffix"]].startswith("Martin~Luther King, Jr." if style == "plain" else "M.~L. King, Jr.")


def test_a_records_page_range_keeps_its_dashes():
    from citefinder.library.bibtex import record_entry

    entry = _entries(record_entry(Paper("x", "T", ("Ann Smith",), 1997, key="k"), {"pages": "1735--1780",
                                                                               "publisher": "A & B"}))["k"]
    assert (entry["pages"], entry["publisher"]) == ("1735--1780", "A \\& B")  # never "1735-{}-1780"
