from dataclasses import replace
from pathlib import Path

import bibtexparser
import pytest

from citefinder.library.bibtex import bib_key_for, entry_type_for, escape_latex, papers_to_bibtex
from citefinder.library.readers import read_papers
from citefinder.types import Paper

BERT = Paper(
    "arxiv:1810.04805",
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    ("Jacob Devlin", "Ming-Wei Chang"),
    2019,
    "Proceedings of NAACL-HLT",
    doi="10.18653/v1/n19-1423",
    arxiv_id="1810.04805",
)
ATTENTION = Paper("arxiv:1706.03762", "Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer"), 2017,
                  arxiv_id="1706.03762")
SPECIAL = Paper(
    "t:special",
    "Costs of 50% & $5 for #tags, snake_case, {braces}, ~tilde, ^caret, back\\slash -- and Müller's café",
    ("Jörg Müller", "Barack and Michelle Foundation"),
    2021,
    "Journal of Odd Characters",
)


def _entries(bib: str):
    library = bibtexparser.parse_string(bib)
    assert library.failed_blocks == []
    return {e.key: e for e in library.entries}


def test_keys_are_readable_and_stable():
    assert bib_key_for(ATTENTION) == "vaswani2017attention"
    assert bib_key_for(BERT) == "devlin2019bert"
    assert bib_key_for(Paper("x", "On the Use of Müller's Method", ("Jörg Müller",))) == "muller" + "nd" + "use"
    assert bib_key_for(Paper("x", "The Art", (), 2000)) == "anon2000art"
    assert bib_key_for(Paper("x", "Deep Learning", ("Yann LeCun Jr.",), 2015)) == "lecun2015deep"
    assert bib_key_for(Paper("x", "Deep Learning", ("LeCun, Yann",), 2015)) == "lecun2015deep"


def test_entry_types_by_venue():
    assert entry_type_for(BERT) == ("inproceedings", "booktitle")
    assert entry_type_for(Paper("x", "T", venue="NeurIPS 2020")) == ("inproceedings", "booktitle")
    assert entry_type_for(Paper("x", "T", venue="Workshop on Scholarly Documents")) == ("inproceedings", "booktitle")
    assert entry_type_for(Paper("x", "T", venue="IEEE Transactions on Pattern Analysis")) == ("article", "journal")
    assert entry_type_for(Paper("x", "T", venue="Nature")) == ("article", "journal")
    assert entry_type_for(Paper("x", "T", venue="Some Venue", entry_type="article")) == ("article", "journal")
    preprint = Paper("x", "T", venue="arXiv preprint arXiv:1706.03762", arxiv_id="1706.03762")
    assert entry_type_for(preprint) == ("misc", None)
    assert entry_type_for(ATTENTION) == ("misc", None)
    assert entry_type_for(Paper("x", "T")) == ("misc", None)


def test_bibtex_fields_and_types():
    bib, keys = papers_to_bibtex([BERT, ATTENTION])
    assert keys == {"arxiv:1810.04805": "devlin2019bert", "arxiv:1706.03762": "vaswani2017attention"}
    entries = _entries(bib)
    bert = entries["devlin2019bert"]
    assert bert.entry_type == "inproceedings"
    assert bert["title"] == "{BERT}: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    assert bert["author"] == "Devlin, Jacob and Chang, Ming-Wei"  # "Last, First": BibTeX need not guess
    assert (bert["booktitle"], bert["year"], bert["doi"]) == (
        "Proceedings of NAACL-HLT", "2019", "10.18653/v1/n19-1423")
    arxiv = entries["vaswani2017attention"]
    assert arxiv.entry_type == "misc"
    assert (arxiv["eprint"], arxiv["archivePrefix"]) == ("1706.03762", "arXiv")
    assert "journal" not in arxiv and "booktitle" not in arxiv


def test_title_protection():
    sentence_case = Paper("x", "Pre-training with BERT and GPT-2 for Python code in iOS apps", (), 2020)
    bib, _ = papers_to_bibtex([sentence_case])
    assert _entries(bib)["anon2020pre"]["title"] == (
        "Pre-training with {BERT} and {GPT-2} for {Python} code in {iOS} apps")
    # Title case: capitals are style, not names; only acronyms are braced.
    bib, _ = papers_to_bibtex([Paper("y", "Learning Deep Features with ResNet Blocks", (), 2016)])
    assert _entries(bib)["anon2016learning"]["title"] == "Learning Deep Features with {ResNet} Blocks"


def test_special_characters_escaped_and_round_trip(tmp_path):
    bib, keys = papers_to_bibtex([SPECIAL, BERT, ATTENTION])
    entry = _entries(bib)[keys["t:special"]]
    assert entry.entry_type == "article"
    # a record's braces are kept (case protection, issue 51), never \textbraceleft{}
    assert entry["title"].startswith(r"Costs of 50\% \& \$5 for \#tags, snake\_case, {braces},")
    # accents as BibTeX's special characters; a name in a sentence-case title braced
    assert entry["title"].endswith("-{}- and {M{\\\"u}ller's} caf{\\'e}")
    assert entry["author"] == "M{\\\"u}ller, J{\\\"o}rg and {Barack and Michelle Foundation}"
    path = tmp_path / "out.bib"
    path.write_text(bib, encoding="utf-8")
    back = {p.title: p for p in read_papers(path)}
    special = SPECIAL.title.replace("{braces}", "braces")  # braces protect case; BibTeX prints none
    assert set(back) == {special, BERT.title, ATTENTION.title}
    assert back[special].authors == SPECIAL.authors
    assert back[BERT.title].doi == BERT.doi
    assert back[ATTENTION.title].arxiv_id == "1706.03762"


def test_same_paper_twice_is_one_entry_and_collisions_get_suffixes():
    twin = Paper("doi:10.48550/arxiv.1706.03762", "Attention is all you need", ("A. Vaswani",), 2017,
                 arxiv_id="1706.03762")
    other1 = Paper("t:1", "Attention Heads", ("Ashish Vaswani",), 2017, "ICML")
    other2 = Paper("t:2", "Attention Layers", ("Ashish Vaswani",), 2017, "ICLR")
    bib, keys = papers_to_bibtex([ATTENTION, other1, ATTENTION, twin, other2])
    assert keys == {
        "arxiv:1706.03762": "vaswani2017attention",
        "t:1": "vaswani2017attentiona",
        "doi:10.48550/arxiv.1706.03762": "vaswani2017attention",
        "t:2": "vaswani2017attentionb",
    }
    assert list(_entries(bib)) == ["vaswani2017attention", "vaswani2017attentiona", "vaswani2017attentionb"]
    assert papers_to_bibtex([other2, other1])[1] == {"t:2": "vaswani2017attention", "t:1": "vaswani2017attentiona"}


def test_empty_input():
    assert papers_to_bibtex([]) == ("", {})


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [("a & b", r"a \& b"), ("100%", r"100\%"), ("x_1", r"x\_1"), ("a--b", "a-{}-b"), ("~", r"\textasciitilde{}")],
)
def test_escape_latex(raw, escaped):
    assert escape_latex(raw) == escaped


def test_round_trip_of_real_fixture(tmp_path):
    papers = [p for p in read_papers(Path(__file__).parent / "data" / "refs.bib") if isinstance(p, Paper)]
    # the .bib's own keys are kept; without them, keys are generated
    assert list(papers_to_bibtex(papers)[1].values()) == ["devlin2019bert", "mueller2020", "vaswani2017attention",
                                                          "neuripsstring2020"]
    bib, keys = papers_to_bibtex([replace(p, key=None) for p in papers])
    assert list(keys.values()) == ["devlin2019bert", "muller2020uber", "vaswani2017attention", "lewis2020retrieval"]
    (tmp_path / "again.bib").write_text(bib, encoding="utf-8")
    again = [p for p in read_papers(tmp_path / "again.bib")]
    assert [p.title for p in again] == [p.title for p in papers]
    assert [p.authors for p in again] == [p.authors for p in papers]
    assert [p.doc_id for p in again] == [p.doc_id for p in papers]
