"""Exports give back the user's own .bib entries: byte for byte, with every field and value, over all 32
real bibliographies of drafts-dev; papers from elsewhere get complete BibTeX; a library keeps the text."""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import pytest

from citefinder.library import bibentry
from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.formats.bib import read_bib
from citefinder.library.records import from_record, to_metadata
from citefinder.text.decode import decode_text
from citefinder.types import Paper

DRAFTS = Path(__file__).resolve().parents[2] / "shared" / "data" / "drafts-dev"
BIBS = sorted(DRAFTS.glob("*/refs.bib"))


def _by_key(text: str) -> dict[str, dict]:
    library = bibtexparser.parse_string(text)
    return {e.key: {"type": e.entry_type.lower(), **{f.key.lower(): f.value for f in e.fields}}
            for e in library.entries}


def test_all_32_drafts_dev_bibliographies_are_there():
    assert len(BIBS) == 32


@pytest.mark.parametrize("bib", BIBS, ids=[b.parent.name for b in BIBS])
def test_every_exported_entry_parses_and_keeps_every_field_and_value(bib: Path):
    text = decode_text(bib.read_bytes())
    papers = [p for p in read_bib(bib) if isinstance(p, Paper)]
    exported, keys = papers_to_bibtex(papers)
    back = bibtexparser.parse_string(exported)
    assert back.failed_blocks == [], [b.raw[:200] for b in back.failed_blocks][:3]
    original, again = _by_key(text), _by_key(exported)
    written = set(keys.values())
    assert written == set(again)
    seen = set()
    for paper in papers:
        key = keys[paper.doc_id]
        if key in seen:  # the same work twice in the file is written once, the first time
            continue
        seen.add(key)
        entry = bibentry.parts(paper.bibtex or "").entry
        own = _by_key(paper.bibtex or "")[bibentry.entry_key(entry)]
        assert again[key] == own, key  # entry type, every field, every value (@string resolved)
        if key == paper.key:
            assert again[key] == original[key], key
            assert entry in exported  # the user's text, byte for byte
        else:  # a key given to two works (the second is renamed) or one LaTeX cannot cite: only the key changes
            assert bibentry.with_key(entry, key) in exported


def test_the_entry_text_is_the_files_own_with_the_strings_it_uses_and_its_crossref_parent(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(
        '@String{pami = "IEEE Trans. PAMI"}\n@string{unused = "x"}\n@string{acm = "ACM" # " Press"}\n\n'
        "% a comment the export does not need\n"
        "@Article{lecun98,\n  author =   {Y. LeCun and L. Bottou},\n  title = {{Gradient-Based Learning}},\n"
        "  journal = pami,\n  pages = {2278--2324},\n  number = {CMU-CS-96-118},\n}\n\n"
        "@InProceedings{child, title = {A Part}, crossref = {proc}, pages = {1--2}, publisher = acm}\n"
        "@Proceedings{proc, title = {The Whole}, year = 2001}\n", encoding="utf-8")
    papers = {p.key: p for p in read_bib(bib) if isinstance(p, Paper)}
    assert papers["lecun98"].bibtex == ('@String{pami = "IEEE Trans. PAMI"}\n\n@Article{lecun98,\n  author =   '
                                        "{Y. LeCun and L. Bottou},\n  title = {{Gradient-Based Learning}},\n  "
                                        "journal = pami,\n  pages = {2278--2324},\n  number = {CMU-CS-96-118},\n}")
    assert papers["lecun98"].position is not None and papers["child"].position > papers["lecun98"].position
    out, keys = papers_to_bibtex([papers["child"], papers["lecun98"]])
    assert out.index("@string{acm") < out.index("@InProceedings{child") < out.index("@Article{lecun98")
    assert out.index("@Article{lecun98") < out.index("@Proceedings{proc")  # the parent after its child
    assert "unused" not in out and "a comment" not in out
    entries = _by_key(out)
    assert entries["lecun98"]["journal"] == "IEEE Trans. PAMI" and entries["lecun98"]["number"] == "CMU-CS-96-118"
    assert entries["child"]["publisher"] == _by_key(bib.read_text())["child"]["publisher"]


def test_a_clashing_key_renames_only_the_key():
    entry = "@Article{smith20,\n  title = {One},\n  year = 2020\n}"
    a = Paper("t:a", "One", ("A Smith",), 2020, key="smith20", bibtex=entry)
    b = Paper("t:b", "Two", ("B Smith",), 2020, key="smith20",
              bibtex="@Article{smith20,\n  title = {Two},\n  year = 2020\n}")
    out, keys = papers_to_bibtex([a, b])
    assert keys == {"t:a": "smith20", "t:b": "smith20a"}
    assert entry in out and "@Article{smith20a,\n  title = {Two},\n  year = 2020\n}" in out


def test_set_fields_replaces_adds_and_removes_keeping_the_rest():
    entry = '@article{k,\n    title = "Old",\n    journal = pami,\n    year = {1999}\n}'
    assert bibentry.set_fields(entry, {"title": "New {GAN}"}) == (
        '@article{k,\n    title = {New {GAN}},\n    journal = pami,\n    year = {1999}\n}')
    assert bibentry.set_fields(entry, {"pages": "1--9"}) == (
        '@article{k,\n    title = "Old",\n    journal = pami,\n    year = {1999},\n    pages = {1--9}\n}')
    assert bibentry.set_fields(entry, {"journal": None}) == '@article{k,\n    title = "Old",\n    year = {1999}\n}'
    assert bibentry.set_fields(entry, {"year": None}) == '@article{k,\n    title = "Old",\n    journal = pami\n}'
    assert bibentry.with_key(entry, "new:key") == entry.replace("{k,", "{new:key,")
    assert bibentry.field_spans("@misc{k, note = {a, {b}, c}, x = 1}") == {"note": (16, 27), "x": (33, 34)}


def test_papers_from_elsewhere_get_complete_bibtex():
    paper = Paper("t:x", "Deep Learning", ("Yann LeCun", "Yoshua Bengio", "others"), 2015, "Nature",
                  doi="10.1038/nature14539", entry_type="article")
    entry = _by_key(papers_to_bibtex([paper])[0])["lecun2015deep"]
    assert entry == {"type": "article", "title": "Deep Learning", "author": "LeCun, Yann and Bengio, Yoshua and others",
                     "journal": "Nature", "year": "2015", "doi": "10.1038/nature14539"}
    report = Paper("t:r", "A Report", ("Ann Author",), 1996, "Carnegie Mellon University", entry_type="techreport")
    assert _by_key(papers_to_bibtex([report])[0])["author1996report"]["institution"] == "Carnegie Mellon University"


def test_the_text_survives_the_store_records_and_an_old_record_has_none():
    paper = Paper("t:x", "T", ("A B",), 2000, bibtex="@misc{k,\r\n  title = {T},\r\n}", position=0, key="k")
    meta = to_metadata(paper, norm_title="t")
    assert meta["bibtex"] == paper.bibtex and meta["position"] == 0
    assert from_record("t:x", meta, "") == paper
    old = from_record("t:x", {"title": "T", "authors": '["A B"]', "year": 2000}, "")
    assert old.bibtex is None and old.position is None
    assert "@misc{anon" not in papers_to_bibtex([old])[0] and "title = {T}" in papers_to_bibtex([old])[0]


def test_a_csl_json_item_keeps_pages_volume_and_publisher_in_its_entry():
    from citefinder.library.readers import read_papers

    papers = [p for p in read_papers(Path(__file__).parent / "data" / "zotero.json") if isinstance(p, Paper)]
    dpr, gpt3 = papers[0], papers[1]
    entry = _by_key(papers_to_bibtex([dpr])[0])["karpukhin2020dense"]
    assert (entry["type"], entry["pages"], entry["volume"]) == ("article", "1-20", "8")
    # accents as BibTeX's special characters (issue 51: one letter when a style abbreviates or sorts)
    assert entry["author"] == "Karpukhin, Vladimir and O{\\u{g}}uz, Barlas and {Facebook AI Research}"
    assert _by_key(gpt3.bibtex or "")["brown2020language"]["publisher"] == "arXiv"
