"""The dumps of the literature read record by record (issue 36): the arXiv metadata snapshot, OpenAlex works and
Semantic Scholar papers, on fixtures written from each format's documentation (tests/data/dumps, README there);
format sniffing, and the category / year filters."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from dumps_support import ARXIV, DUMPS, OA_NAME, OPENALEX, S2_ABSTRACTS, S2_PAPERS

from citefinder.errors import InputError
from citefinder.library.dumps import DumpFilter, parse_categories, parse_years
from citefinder.library.formats import arxiv, openalex, s2
from citefinder.library.formats.lines import Position, first_record, positioned_records
from citefinder.library.readers import read_papers, reader_for, sniff_format
from citefinder.types import ImportFailure, Paper

S2_JOINED = DUMPS / "s2-joined.jsonl"


def _read(path: Path) -> tuple[dict[str, Paper], list[ImportFailure]]:
    items = list(read_papers(path))
    papers: dict[str, Paper] = {}
    for p in items:
        if isinstance(p, Paper):
            papers.setdefault(p.doc_id, p)  # the first of a duplicated id
    return papers, [f for f in items if isinstance(f, ImportFailure)]


def test_arxiv_snapshot_fields_ids_years_and_authors():
    papers, failures = _read(ARXIV)
    attention = papers["arxiv:1706.03762"]
    assert attention.title == "Attention Is All You Need" and attention.year == 2017
    assert attention.authors == ("Ashish Vaswani", "Noam Shazeer", "Niki Parmar")
    assert attention.abstract.startswith("The dominant sequence transduction models are recurrent. We propose")
    assert "\n" not in attention.abstract and attention.source == ARXIV.name
    # old-style ids, a title broken over lines, the year of 1999 from the first version
    old = papers["arxiv:hep-th/9901001"]
    assert (old.arxiv_id, old.year) == ("hep-th/9901001", 1999)
    assert old.title == "Holographic renormalisation of a toy gauge theory"
    assert papers["arxiv:math/0309136"].year == 2003
    # ids a CSV round trip turned into numbers, read back (four digits after the point before 2015, five from 2015)
    assert papers["arxiv:0704.0001"].year == 2007 and "arxiv:1501.00010" in papers
    # LaTeX accents in authors_parsed decoded; the first of several DOIs; journal-ref as the venue
    diphoton = papers["arxiv:0704.0001"]
    assert diphoton.authors[0] == "C. Balázs"
    assert diphoton.doi == "10.1103/physrevd.76.013009" and diphoton.venue == "Phys.Rev.D76:013009,2007"
    # non-ASCII names kept; LaTeX in the title kept as written (the identity rule reads through it)
    bridge = papers["arxiv:1602.01234"]
    assert bridge.authors == ("Jürgen Müller", "Bernt Øksendal", "小明 王")
    assert bridge.title.startswith("$\\ell_1$-regularized Schr")
    assert papers["arxiv:1603.00002"].abstract == ""  # no abstract
    assert papers["arxiv:1805.00003"].authors == ("A. Smith", "B. Jones")  # no authors_parsed: the text, split
    assert papers["arxiv:1905.00004"].year == 2019  # no versions: the id's year
    assert papers["arxiv:2001.00005"].year == 2020  # versions out of order: the first version's year
    no_id = next(p for p in papers.values() if p.title == "A converted record without an arXiv id")
    assert no_id.doc_id.startswith("t:") and no_id.arxiv_id is None and no_id.year == 2011


def test_arxiv_bad_lines_are_failures_with_their_line_numbers():
    _, failures = _read(ARXIV)
    assert [(f.source, f.reason.split(" (")[0]) for f in failures] == [
        (f"{ARXIV.name}:12", "line 12 has no title"),
        (f"{ARXIV.name}:13", "line 13 is not valid JSON"),
        (f"{ARXIV.name}:14", "line 14 is a JSON list, expected an object"),
        (f"{ARXIV.name}:15", "line 15 has an id that is not an arXiv id"),
    ]


@pytest.mark.parametrize("value, expected", [
    ("0704.0001", "0704.0001"), ("hep-th/9901001v2", "hep-th/9901001"), (704.0001, "0704.0001"),
    (704.001, "0704.0010"), (1501.0001, "1501.00010"), (1912.12345, "1912.12345"), (None, None), (True, None),
    ("math.GT/0309136", "math/0309136"),
])
def test_arxiv_ids_as_written_and_as_numbers(value, expected):
    assert arxiv.arxiv_id(value) == expected


@pytest.mark.parametrize("aid, year", [("0704.0001", 2007), ("1501.00010", 2015), ("hep-th/9901001", 1999),
                                       ("cs/0112017", 2001), ("junk", None)])
def test_arxiv_year_of_id(aid, year):
    assert arxiv.year_of_id(aid) == year


def test_openalex_inverted_index_decoded_with_repeats_punctuation_and_gaps():
    index = {"The": [0, 7], "model,": [1], "which": [2], "is": [3], "small,": [4], "beats": [5], "(and": [6],
             "model)": [8], "the": [9], "baseline.": [11], "junk": ["x", -1, True]}
    assert openalex.decode_inverted_index(index) == "The model, which is small, beats (and The model) the baseline."
    assert openalex.decode_inverted_index(None) == "" and openalex.decode_inverted_index([1, 2]) == ""
    assert openalex.decode_inverted_index({"first": [0], "last": [10**9]}) == "first last"
    assert openalex.decode_inverted_index({"w": list(range(openalex.MAX_ABSTRACT_WORDS + 1))}) == ""


def test_openalex_works_fields_ids_and_arxiv_ids():
    papers, failures = _read(OPENALEX)
    by_title = {p.title: p for p in papers.values()}
    attention = papers["arxiv:1706.03762"]  # the arXiv id from an arxiv.org landing page (version dropped)
    assert attention.ids == (("openalex", "W2626778328"),) and attention.venue == "arXiv (Cornell University)"
    bert = papers["doi:10.18653/v1/n19-1423"]
    assert bert.ids == (("openalex", "W2963341956"), ("mag", "2963341956")) and bert.entry_type == "article"
    assert bert.year == 2019 and bert.venue == "North American Chapter of the ACL"
    gaps = by_title["Repeated words, punctuation and gaps"]
    assert gaps.abstract == "The model, which is small, beats (and The model) the baseline."
    assert gaps.authors == ("Zoë Ångström",)
    assert by_title["No abstract at all"].abstract == ""
    display = by_title["Title only in display_name"]
    assert display.authors == ("Raw Name Only",)  # raw_author_name when the author has no display name
    assert papers["arxiv:2101.00001"].doi == "10.48550/arxiv.2101.00001"  # an arXiv DOI gives the arXiv id
    assert by_title["Cardiac magnetic resonance in heart failure"].ids == (("openalex", "W3005"), ("pmid", "29912345"))
    assert by_title["A chapter about transformers in $\\mathbb{R}^n$"].entry_type == "incollection"
    assert by_title["Undated work"].year is None
    assert [(f.source, f.reason) for f in failures] == [(f"{OA_NAME}:6", "line 6 has no title")]


def test_openalex_topics_are_the_primary_topic_and_confident_concepts():
    records = [r for _, r in positioned_records(OPENALEX) if isinstance(r, dict)]
    cardiac = next(r for r in records if r["title"] == "Cardiac magnetic resonance in heart failure")
    assert openalex.topics(cardiac) == ("Cardiac Imaging", "Cardiology and Cardiovascular Medicine", "Medicine",
                                        "Health Sciences", "Medicine")  # not the 0.05 "Computer science" guess
    assert "Computer Science" in openalex.topics(records[0])


def test_s2_papers_records_ids_and_missing_values():
    papers, failures = _read(S2_PAPERS)
    attention = papers["arxiv:1706.03762"]
    assert attention.ids == (("s2", "13756489"), ("mag", "2963403868"), ("dblp", "conf/nips/VaswaniSPUJGKP17"))
    assert attention.entry_type == "inproceedings" and attention.abstract == ""  # the join adds it (test_dumps_import)
    assert papers["doi:10.18653/v1/n19-1423"].ids == (("s2", "52967399"), ("acl", "N19-1423"))
    by_title = {p.title: p for p in papers.values()}
    assert by_title["Echocardiography screening in rural clinics"].authors == ("Søren Kierkegaard-Hansen",)
    nulls = by_title["Null external ids and year"]
    assert (nulls.year, nulls.doi, nulls.ids) == (None, None, (("s2", "100004"),))
    assert [(f.source, f.reason) for f in failures] == [(f"{S2_PAPERS.name}:5", "line 5 has no title")]


def test_s2_joined_and_graph_api_records_keep_their_abstract():
    papers, _ = _read(S2_JOINED)
    assert papers["arxiv:1706.03762"].abstract == "Graph API record with its abstract inline."
    assert papers["arxiv:1706.03762"].ids[0] == ("s2", "13756489")
    assert papers["doi:10.1000/joined"].abstract.startswith("Joined offline")


def test_an_abstracts_file_alone_says_to_import_it_with_its_papers():
    items = list(read_papers(S2_ABSTRACTS))
    assert len(items) == 1 and isinstance(items[0], ImportFailure) and "with the papers files" in items[0].reason


def test_the_same_work_from_three_dumps_has_one_doc_id_or_shares_a_doi():
    ids = [{p.doc_id for p in _read(f)[0].values()} for f in (ARXIV, OPENALEX, S2_PAPERS)]
    assert all("arxiv:1706.03762" in s for s in ids)
    bert_arxiv = _read(ARXIV)[0]["arxiv:1810.04805"]
    assert bert_arxiv.doi == "10.18653/v1/n19-1423"  # the key the OpenAlex and S2 records (doi:...) dedupe on


@pytest.mark.parametrize("path, fmt", [(ARXIV, "arxiv"), (OPENALEX, "openalex"), (S2_PAPERS, "s2"),
                                       (S2_ABSTRACTS, "s2-abstracts"), (S2_JOINED, "s2")])
def test_format_sniffed_from_the_first_record_whatever_the_name(path, fmt):
    assert sniff_format(path) == fmt


def test_sniffing_leaves_other_files_to_their_readers(tmp_path):
    own = tmp_path / "mine.jsonl"
    own.write_text(json.dumps({"doc_id": "x", "title": "A paper"}) + "\n", encoding="utf-8")
    csl = tmp_path / "zotero.json"
    csl.write_text(json.dumps([{"id": "a", "title": "T", "type": "article"}], indent=2), encoding="utf-8")
    assert sniff_format(own) == "jsonl" and sniff_format(csl) is None
    assert reader_for(own).__name__ == "read_jsonl" and reader_for(csl).__name__ == "read_csl_json"
    assert reader_for(ARXIV).__name__ == "read_arxiv"  # named .json, read as the snapshot
    gz = tmp_path / "part_001.gz"  # no .jsonl in the name
    gz.write_bytes(gzip.compress(gzip.decompress(OPENALEX.read_bytes())))
    assert reader_for(gz).__name__ == "read_openalex"
    assert first_record(tmp_path / "missing.json") is None


def test_positions_resume_in_plain_and_gzip_files(tmp_path):
    plain = list(positioned_records(ARXIV))
    middle = plain[9][0]
    assert [r for _, r in positioned_records(ARXIV, middle)] == [r for _, r in plain[10:]]
    gz_items = list(positioned_records(OPENALEX))
    at = gz_items[3][0]
    assert at.record == 4 and [r for _, r in positioned_records(OPENALEX, at)] == [r for _, r in gz_items[4:]]
    assert list(positioned_records(OPENALEX, Position(0, 0))) == gz_items


def test_truncated_gzip_dump_keeps_the_records_before_the_break(tmp_path):
    data = OPENALEX.read_bytes()
    cut = tmp_path / "part_002.gz"
    cut.write_bytes(data[: len(data) // 2])
    items = [r for _, r in positioned_records(cut)]
    assert isinstance(items[-1], ImportFailure) and "truncated or damaged" in items[-1].reason
    assert any(isinstance(r, dict) for r in items[:-1])


@pytest.mark.parametrize("text, years", [("2015-2020", (2015, 2020)), ("2015-", (2015, None)), ("-2020", (None, 2020)),
                                         ("2019", (2019, 2019)), (" 2015 - 2020 ", (2015, 2020)), (None, (None, None))])
def test_year_ranges(text, years):
    assert parse_years(text) == years


@pytest.mark.parametrize("text", ["2020-2015", "last year", "-", "15-20"])
def test_bad_year_ranges_say_what_to_give(text):
    with pytest.raises(InputError, match="2015-2020"):
        parse_years(text)


def test_category_filter_exact_prefix_and_wildcards():
    f = DumpFilter(parse_categories("cs.CL, stat.*,math"))
    assert f.categories == ("cs.CL", "stat.*", "math")
    assert f.keeps_topics(("cs.cl",)) and f.keeps_topics(("stat.ML",)) and f.keeps_topics(("math.GT", "hep-th"))
    assert not f.keeps_topics(("cs.LG",)) and not f.keeps_topics(("mathematics",)) and not f.keeps_topics(())
    assert DumpFilter().keeps_topics(()) and DumpFilter(categories=("Computer Science",)).keeps_topics(
        ("Natural Language Processing Techniques", "computer science"))


def test_year_filter_open_ends_and_unknown_years():
    assert DumpFilter(years=(2015, None)).keeps_year(2030) and not DumpFilter(years=(2015, None)).keeps_year(2014)
    assert not DumpFilter(years=(None, 2020)).keeps_year(None)  # a year range leaves undated records out
    assert DumpFilter().keeps_year(None)
    assert DumpFilter(("cs.*",), (2015, 2020)).spec() == "categories=cs.* years=2015-2020"


def test_s2_topics_from_both_field_lists():
    record = {"s2fieldsofstudy": [{"category": "Medicine", "source": "s2-fos-model"}, {"category": None}],
              "fieldsofstudy": ["Medicine", "Biology"]}
    assert s2.topics(record) == ("Medicine", "Biology")
