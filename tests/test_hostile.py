"""The hostile corpus (tests/hostile/): every bad file gives its good records and a clear reason
by file and line, never a traceback; output stays free of control characters."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.readers import read_papers
from citefinder.select.answer import interpret_titles
from citefinder.text.drafts import extract_draft_text
from citefinder.text.slots import find_slots
from citefinder.text.textsafe import json_safe, terminal_safe
from citefinder.types import ImportFailure, Paper

HOSTILE = Path(__file__).resolve().parent / "hostile"

# file -> (titles of the papers it must give, substrings of its failures' "source | reason" in order)
EXPECTED: dict[str, tuple[list[str], list[str]]] = {
    "lone-surrogate.jsonl": (["Good paper number 1 about retrieval", "Broken \ufffd surrogate",
                              "Good paper number 3 about retrieval"], []),
    "entry-type-object.jsonl": (["Good paper number 1 about retrieval", "Good paper number 3 about retrieval"],
                                ["entry-type-object.jsonl:2 | line 2 has a JSON object in field 'entry_type'"]),
    "non-string-types.jsonl": (["1234", "Good paper number 4 about retrieval", "Good paper number 5 about retrieval",
                                "Good paper number 6 about retrieval", "Good paper number 10 about retrieval"],
                               [":2 | line 2 has a JSON object in field 'abstract'",
                                ":3 | line 3 has a JSON number in field 'author'", ":7 | line 7 has no title",
                                ":8 | line 8 has a JSON boolean in field 'title'", ":9 | line 9 is a JSON list"]),
    "deep-nesting.jsonl": (["Good paper number 1 about retrieval", "Good paper number 3 about retrieval"],
                           ["deep-nesting.jsonl:2 | line 2 is nested too deeply"]),
    "control-chars.jsonl": (["Clear screen evil"], []),
    "truncated.jsonl.gz": ([f"Good paper number {i} about retrieval" for i in range(1, 18)],
                           ["truncated.jsonl.gz | could not read past line 17: the file is truncated"]),
    "not-gzip.jsonl.gz": ([], ["not-gzip.jsonl.gz | not-gzip.jsonl.gz is not gzip-compressed"]),
    "utf16-bom.jsonl": (["Good paper number 1 about retrieval", "Über Café Stoff"], []),
    "utf16le-nobom.jsonl": (["Good paper number 1 about retrieval", "Good paper number 2 about retrieval"], []),
    "latin1.jsonl": (["Good paper number 1 about retrieval", "Über Café Stoff"], []),
    "empty.jsonl": ([], ["empty.jsonl | no records found in empty.jsonl: the file is empty"]),
    "csl-author-number.json": (["First CSL item", "Third CSL item"],
                               ["csl-author-number.json item 2 | item 2 (b) has a JSON number in field 'author'"]),
    "deep-nesting-csl.json": (["First CSL item", "Third CSL item"],
                              ["deep-nesting-csl.json item 2 (line 2) | item 2 is nested too deeply"]),
    "utf16-bom-csl.json": (["Zotero export in UTF-16"], []),
    "junk.json": ([], ["junk.json:1 | not valid JSON"]),
    "empty-list.json": ([], ["no records found in empty-list.json — is it a CSL-JSON file"]),
    "empty.bib": ([], ["no records found in empty.bib: the file is empty"]),
    "whitespace.bib": ([], ["no records found in whitespace.bib — is it a BibTeX file"]),
    "junk.bib": ([], ["no records found in junk.bib — is it a BibTeX file"]),
    "comments-only.bib": ([], ["no records found in comments-only.bib — is it a BibTeX file"]),
    "zip-renamed.bib": ([], ["zip-renamed.bib is a ZIP archive"]),
    "nul-filled.bib": ([], ["nul-filled.bib is binary data (it contains NUL bytes), not a BibTeX file"]),
    "latin1.bib": (["Müller's café theory"], []),
    "utf16le-nobom.bib": (["A title in UTF-16 without BOM"], []),
    "crossref.bib": (["Proceedings of the Hostile Workshop", "Proceedings of the Hostile Workshop"], []),
    "control-chars.bib": (["Bell and red right-to-left"], []),
}
DRAFTS = {"draft-utf16le-nobom.txt": "Dense retrieval [CITATION] beats BM25", "draft-latin1.txt": "Café retrieval"}


def _read(name: str) -> tuple[list[Paper], list[ImportFailure]]:
    items = list(read_papers(HOSTILE / name))
    return [i for i in items if isinstance(i, Paper)], [i for i in items if isinstance(i, ImportFailure)]


def test_every_hostile_file_is_covered() -> None:
    on_disk = {p.name for p in HOSTILE.iterdir() if p.suffix != ".py"}
    assert on_disk == set(EXPECTED) | set(DRAFTS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_file_gives_its_good_records_and_clear_failures(name: str) -> None:
    titles, reasons = EXPECTED[name]
    papers, failures = _read(name)
    assert [p.title for p in papers] == titles
    got = [f"{f.source} | {f.reason}" for f in failures]
    assert len(got) == len(reasons), got
    for text, want in zip(got, reasons, strict=True):
        assert want in text
    for p in papers:  # every stored text encodes and holds no control characters
        for text in (p.title, p.abstract, p.venue or "", *p.authors):
            text.encode("utf-8")
            assert terminal_safe(text) == text


def test_crossref_child_inherits_title_venue_and_year() -> None:
    papers, _ = _read("crossref.bib")
    child = next(p for p in papers if p.entry_type == "inproceedings")
    assert (child.authors, child.year, child.venue) == (("Jane Doe",), 2021, "Proceedings of the Hostile Workshop")


@pytest.mark.parametrize("name", sorted(DRAFTS))
def test_drafts_in_other_encodings_are_decoded(name: str) -> None:
    text = extract_draft_text((HOSTILE / name).read_bytes(), name)
    assert DRAFTS[name] in text
    assert len(find_slots(text)) == 1


def test_exported_bib_holds_no_control_characters() -> None:
    evil = Paper("x", "Bell\x07 \x1b[31mred\x1b[0m\x00 \u202eevil", authors=("A\x1b]0;title\x07 B",),
                 venue="Proceedings of \u202eACL", year=2020)
    bib, _ = papers_to_bibtex([evil])
    assert not any(c in bib for c in "\x00\x07\x1b\u202e")
    assert "Bell red evil" in bib and "B, A" in bib  # names are written "Last, First"


def test_terminal_and_json_output_are_escaped() -> None:
    line = "Title\x1b[2J\x1b]0;pwned\x07 \u202eevil\x00"
    assert terminal_safe(line) == "Title evil"
    assert json_safe('{"t": "a\u202eb\x9bc"}') == '{"t": "a\\u202eb\\u009bc"}'


def test_answer_title_starting_with_a_number_is_not_that_candidate_number() -> None:
    titles = ["Attention Is All You Need", "1-bit Adam: Communication Efficient Large-Scale Training", "BERT"]
    answer = interpret_titles("1-bit Adam: Communication Efficient Large-Scale Training", titles)
    assert (answer.kind, answer.index, answer.how) == ("pick", 1, "title")
    assert interpret_titles("1-bit Adam", titles).index != 0
    assert interpret_titles("3", titles).index == 2
    assert interpret_titles("[2]", titles).index == 1
