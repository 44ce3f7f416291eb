"""Citation keys: kept from .bib / CSL-JSON / JSONL, used by the .bib export, never shared by two papers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import bibtexparser

from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.formats.common import clean_key
from citefinder.library.identity import make_doc_id
from citefinder.library.readers import read_papers
from citefinder.types import Paper

LATEX = Path(__file__).parent / "data" / "latex"


def _papers(path: Path) -> list[Paper]:
    return [p for p in read_papers(path) if isinstance(p, Paper)]


def test_bib_entry_keys_are_kept_for_every_entry():
    papers = _papers(LATEX / "refs.bib")
    assert len(papers) == 24
    keys = [p.key for p in papers]
    assert len(set(keys)) == 24
    assert keys[:3] == ["Vaswani.Shazeer.ea.2017", "Devlin.Chang.ea.2019", "Liu.Ott.Goyal.ea.2019"]
    assert Paper.from_dict(papers[2].to_dict()).key == "Liu.Ott.Goyal.ea.2019"


def test_better_bibtex_csl_json_keys_and_zotero_item_uris():
    papers = _papers(LATEX / "refs-bbt.json")
    assert [p.key for p in papers] == [
        "Liu.Ott.Goyal.ea.2019", "Karpukhin.Oguz.ea.2020", "lecun2015deep", "goodfellow2016deep",
        "Robertson.Zaragoza.2009",  # only "id", as older Better BibTeX exports write it
    ]
    # Zotero's own CSL export writes item URIs as "id": those are not citation keys
    zotero = _papers(Path(__file__).parent / "data" / "zotero.json")
    assert zotero and all(p.key is None for p in zotero)


def test_jsonl_optional_key_and_uncitable_keys_dropped(tmp_path):
    rows = [
        {"doc_id": "arxiv:1706.03762", "title": "Attention Is All You Need", "key": "vaswani17"},
        {"doc_id": "x:2", "title": "No Key Here"},
        {"doc_id": "x:3", "title": "Bad Key", "key": "has space"},
    ]
    path = tmp_path / "lib.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert [p.key for p in _papers(path)] == ["vaswani17", None, None]
    assert clean_key("Liu.Ott.Goyal.ea.2019") == "Liu.Ott.Goyal.ea.2019"
    assert clean_key("http://zotero.org/users/1/items/AB") is None
    assert clean_key("DBLP:journals/corr/abs-1904-10509") == "DBLP:journals/corr/abs-1904-10509"  # DBLP's keys
    assert clean_key("a,b") is None and clean_key("") is None and clean_key(7) is None


def test_same_title_same_year_different_first_author_get_different_t_ids():
    a = Paper("", "Deep Learning", authors=("Yann LeCun",), year=2016)
    b = Paper("", "Deep learning", authors=("Ian Goodfellow", "Yoshua Bengio"), year=2016)
    assert make_doc_id(a) != make_doc_id(b)
    assert make_doc_id(a) == make_doc_id(Paper("", "Deep learning.", authors=("LeCun, Yann",), year=2016))


def test_lecun_and_goodfellow_deep_learning_export_as_two_entries():
    lecun = Paper("t:1", "Deep learning", authors=("Yann LeCun", "Yoshua Bengio"), year=2015, venue="Nature")
    goodfellow = Paper("t:2", "Deep Learning", authors=("Ian Goodfellow",), year=2016, venue="MIT Press")
    bib, keys = papers_to_bibtex([lecun, goodfellow])
    assert keys == {"t:1": "lecun2015deep", "t:2": "goodfellow2016deep"}
    assert len(bibtexparser.parse_string(bib).entries) == 2
    # same title and year, different first authors: still two works
    other = replace(goodfellow, doc_id="t:3", year=2015)
    assert len(set(papers_to_bibtex([lecun, other])[1].values())) == 2
    # the same work twice (same title, year and first author) is written once
    again = replace(lecun, doc_id="t:4")
    assert papers_to_bibtex([lecun, again])[1] == {"t:1": "lecun2015deep", "t:4": "lecun2015deep"}


def test_user_keys_are_used_and_generated_keys_avoid_stored_and_user_keys():
    mine = Paper("a", "Attention Is All You Need", authors=("Ashish Vaswani",), year=2017, key="Vaswani.ea.2017")
    clash = Paper("b", "Attention everywhere", authors=("Jane Vaswani",), year=2017, key="vaswani2017attention")
    plain = Paper("c", "Attention is not explanation", authors=("Sarthak Vaswani",), year=2017)
    stored = {"vaswani2017attentiona"}  # a key the library holds for some other paper
    bib, keys = papers_to_bibtex([mine, plain, clash], taken=stored.__contains__)
    assert keys == {"a": "Vaswani.ea.2017", "c": "vaswani2017attentionb", "b": "vaswani2017attention"}
    assert [e.key for e in bibtexparser.parse_string(bib).entries] == [
        "Vaswani.ea.2017", "vaswani2017attentionb", "vaswani2017attention"]


def test_two_papers_bringing_the_same_key_do_not_share_it():
    a = Paper("a", "First paper", authors=("A Smith",), year=2020, key="smith2020")
    b = Paper("b", "Second paper", authors=("B Smith",), year=2020, key="smith2020")
    _, keys = papers_to_bibtex([a, b])
    assert keys == {"a": "smith2020", "b": "smith2020a"}


def test_a_duplicate_without_key_takes_the_key_of_its_twin():
    with_key = Paper("doi:10.1/x", "Same", doi="10.1/x", key="mine")
    without = Paper("arxiv:1234.56789", "Same", doi="10.1/x", arxiv_id="1234.56789")
    assert papers_to_bibtex([without, with_key])[1] == {"arxiv:1234.56789": "mine", "doi:10.1/x": "mine"}
