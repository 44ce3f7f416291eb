"""Ownership by identity (issue 29, item 1): a work the sample holds becomes the user's when the user's own file
brings it, whatever its key — the sample's own key included — and from a JSONL record too."""

from __future__ import annotations

import json
import re
from pathlib import Path

from citefinder.config import Settings
from citefinder.library import sample
from citefinder.library.formats.bib import read_bib
from citefinder.library.sample_file import as_sample
from citefinder.library.store import Library
from citefinder.types import Paper

ROOT = Path(__file__).resolve().parent.parent
OWN = ROOT / "tests" / "data" / "own-over-sample.bib"
KEYS = ("devlin2019bert", "luong2015effective", "glorot2010understanding", "vaswani2017attention", "kingma2015adam")


def small_sample(folder: Path) -> list[Paper]:
    """The sample's papers of these five works, as an import of the shipped file stores them (marked)."""
    text = (ROOT / "assets" / sample.SAMPLE_FILE).read_text()
    entries = [m.group(0) for m in re.finditer(r"@\w+\{(\w+),.*?\n\}\n", text, flags=re.S) if m.group(1) in KEYS]
    assert len(entries) == len(KEYS)
    path = folder / sample.SAMPLE_FILE
    path.write_text("\n".join(entries))
    return [as_sample(p) for p in read_bib(path) if isinstance(p, Paper)]


def test_every_entry_of_the_users_bib_is_theirs_same_key_or_not(tmp_path: Path) -> None:
    library = Library.open(Settings(library=tmp_path / "library"))
    assert library.add_papers(small_sample(tmp_path)).added == 5
    report = library.import_files([OWN])
    assert (report.added, report.duplicates, len(report.updated)) == (1, 0, 5)  # each sample work became the user's
    for key in re.findall(r"^@\w+\{([^,]+),", OWN.read_text(), flags=re.M):
        paper = library.by_key(key)
        assert paper is not None and paper.source == OWN.name, (key, paper)
        assert paper.bibtex is not None and paper.bibtex.startswith("@") and "{" + key + "," in paper.bibtex
    assert library.by_key("vaswani2017attention") is None  # the sample's key gave way to the user's
    assert sample.counts(library) == sample.Counts(6, 0)
    assert sample.hidden_ids(library) == frozenset()


def test_a_jsonl_record_of_a_sample_work_makes_it_the_users(tmp_path: Path) -> None:
    library = Library.open(Settings(library=tmp_path / "library"))
    library.add_papers(small_sample(tmp_path))
    records = tmp_path / "mine.jsonl"
    records.write_text(json.dumps({"doc_id": "mine-1", "title": "Adam: A Method for Stochastic Optimization",
                                   "key": "kingma2015adam", "year": 2015}) + "\n")
    library.import_files([records])
    paper = library.by_key("kingma2015adam")
    assert paper is not None and not sample.is_sample(paper) and paper.source == "mine.jsonl"
    assert sample.counts(library) == sample.Counts(1, 4)
