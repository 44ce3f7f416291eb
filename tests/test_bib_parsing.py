"""BibTeX and CSL-JSON read as BibTeX and Zotero write them (issue 21): @string concatenation,
apostrophe keys, a null CSL-JSON document."""

from __future__ import annotations

from pathlib import Path

from citefinder.library.formats.bib import read_bib
from citefinder.library.readers import read_papers
from citefinder.types import ImportFailure, Paper

BIB = r"""@string{acl = "Proceedings of ACL"}
@string{conf = {Conference}}
@string{both = acl # { and } # conf}
@inproceedings{o'neil2016weapons,
  title = {Weapons of Math Destruction},
  author = {O'Neil, Cathy},
  booktitle = acl # " 2020",
  year = 2016, month = jan,
}
@article{sharp, title = {C# and {F#} in "practice"}, journal = both, year = {2019}}
@article{quoted, title = "Quoted, with {Braces}", journal = conf # {s}, year = "2018"}
"""


def test_string_concatenation_and_apostrophe_keys(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    papers = [p for p in read_bib(path) if isinstance(p, Paper)]
    assert [p.key for p in papers] == ["o'neil2016weapons", "sharp", "quoted"]
    assert papers[0].venue == "Proceedings of ACL 2020"
    assert papers[1].title == 'C# and F# in "practice"'  # a # inside braces is text, not concatenation
    assert papers[1].venue == "Proceedings of ACL and Conference"  # a @string built from others
    assert (papers[2].title, papers[2].venue, papers[2].year) == ("Quoted, with Braces", "Conferences", 2018)


def test_a_duplicate_entry_is_read_like_the_others(tmp_path: Path) -> None:
    # bibtexparser hands a reused key over unprocessed: its braces and quotes stayed in the record
    path = tmp_path / "refs.bib"
    path.write_text('@article{k, title = {First}, author = {Doe, Jane and Roe, Rick}, year = 2020}\n'
                    '@article{k, title = "Second", author = {Lee, Ann}, url = {http://x.org/a}, year = 2021}\n')
    first, second = [p for p in read_bib(path) if isinstance(p, Paper)]
    assert first.authors == ("Jane Doe", "Rick Roe")
    assert (second.title, second.authors, second.url) == ("Second", ("Ann Lee",), "http://x.org/a")


def test_csl_json_null_is_a_clear_failure(tmp_path: Path) -> None:
    path = tmp_path / "zotero.json"
    path.write_text("null", encoding="utf-8")
    (failure,) = list(read_papers(path))
    assert isinstance(failure, ImportFailure)
    assert "expected CSL-JSON" in failure.reason and "substring" not in failure.reason
    path.write_text('[null, {"id": "k1", "title": "A real title of a paper"}]', encoding="utf-8")
    items = list(read_papers(path))
    assert isinstance(items[0], ImportFailure) and "not a JSON object" in items[0].reason
    assert isinstance(items[1], Paper) and items[1].key == "k1"
