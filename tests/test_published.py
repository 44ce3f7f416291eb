"""Preprints that were published (issue 51): each form of a preprint citation detected, a published entry not
taken for one, the same-work rule saying nothing for another work (a sequel, another author, years apart), the
entry rewritten under the same key field by field with every other byte of the .bib kept and a backup, and the
published version found in a literature library built from a .bib."""

from __future__ import annotations

from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.library.bibupdate import update_text, updated_entry
from citefinder.library.formats.bib import read_bib
from citefinder.library.published import Published, preprint_form, published_of, same_published_work
from citefinder.library.store import Library
from citefinder.sources.local import LocalLiterature
from citefinder.sources.published import find_published
from citefinder.text.safewrite import WritePlan
from citefinder.types import Paper
from citefinder.workflow.published import Preprints, find_in_bibs, write_published

DATA = Path(__file__).parent / "data"
PREPRINTS = DATA / "preprints.bib"
PUBLISHED = DATA / "preprints-published.bib"


def entries(path: Path) -> dict[str, Paper]:
    return {p.key: p for p in read_bib(path) if isinstance(p, Paper) and p.key}


@pytest.mark.parametrize("key, form", [
    ("kingma2014adam", "journal = arXiv preprint arXiv:1412.6980"),
    ("DBLP:journals/corr/BahdanauCB14", "DBLP CoRR"),
    ("corrvolume", "DBLP CoRR"),
    ("plainCoRR", "journal = CoRR"),
    ("biorxiv2020", "journal = bioRxiv"),
    ("howpub", "howpublished = arXiv:1706.03762"),
    ("notearxiv", "note = arXiv preprint arXiv:1606.01540"),
    ("publisherarxiv", "publisher = arXiv"),
    ("eprintonly", "eprint without a venue"),
    ("arxivdoi", "an arXiv DOI without a venue"),
])
def test_each_form_of_a_preprint_citation_is_detected(key: str, form: str) -> None:
    assert preprint_form(entries(PREPRINTS)[key]) == form


@pytest.mark.parametrize("key", ["dblpPublished", "neurips2017", "bookchapter"])
def test_a_published_entry_with_an_eprint_is_not_a_preprint(key: str) -> None:
    entry = entries(PREPRINTS)[key]
    assert preprint_form(entry) is None
    assert published_of(entry) is not None or key == "bookchapter"


def paper(title: str, author: str, year: int | None, **kw: object) -> Paper:
    return Paper(doc_id="x", title=title, authors=(author,), year=year, **kw)  # type: ignore[arg-type]


def test_the_same_work_rule_says_nothing_for_another_work() -> None:
    pre = paper("Adam: A Method for Stochastic Optimization", "Diederik P. Kingma", 2014, arxiv_id="1412.6980")
    assert same_published_work(pre, paper("Adam: a method for stochastic optimization", "Kingma, D.", 2015,
                                           venue="ICLR"))
    # a sequel, another author's same title, years too far apart, another arXiv id, a generic title
    assert not same_published_work(pre, paper("Adam II: A Method for Stochastic Optimization", "Kingma", 2016))
    assert not same_published_work(pre, paper("Adam: A Method for Stochastic Optimization", "Smith", 2015))
    assert not same_published_work(pre, paper("Adam: A Method for Stochastic Optimization", "Kingma", 2019))
    assert not same_published_work(pre, paper("Adam: A Method for Stochastic Optimization", "Kingma", 2015,
                                              arxiv_id="1501.00001"))
    assert not same_published_work(paper("Introduction", "Kingma", 2014), paper("Introduction", "Kingma", 2015))
    # the preprint's own arXiv DOI names it too; a retitled version found by its arXiv id is one work
    assert same_published_work(pre, paper("Adam: Stochastic Optimization", "X", 2015,
                                           doi="10.48550/arXiv.1412.6980"))


def test_the_entry_is_rewritten_field_by_field_under_its_key() -> None:
    text = ("@article{kingma2014adam,\n  title={Adam: A method for stochastic optimization},\n"
            "  author={Kingma, Diederik P and Ba, Jimmy},\n  journal={arXiv preprint arXiv:1412.6980},\n"
            "  year={2014}\n}")
    out = updated_entry(text, Published("inproceedings", "ICLR", 2015, "1--15", None, None, "10.1/iclr"))
    assert out == ("@inproceedings{kingma2014adam,\n  title={Adam: A method for stochastic optimization},\n"
                   "  author={Kingma, Diederik P and Ba, Jimmy},\n  year={2015},\n  booktitle={ICLR},\n"
                   "  pages={1--15},\n  doi={10.1/iclr}\n}")
    corr = entries(PREPRINTS)["DBLP:journals/corr/BahdanauCB14"].bibtex or ""
    journal = updated_entry(corr, Published("article", "Neural Comput.", 2016, "1--9", "28", "3", None))
    assert journal.startswith("@article{DBLP:journals/corr/BahdanauCB14,") and "CoRR" not in journal
    assert "{abs/1409.0473}" not in journal and "volume    = {28}" in journal and "number    = {3}" in journal
    assert "eprint    = {1409.0473}" in journal, "the arXiv id stays"


def test_says_nothing_and_writes_nothing_where_the_record_is_another_work(tmp_path: Path) -> None:
    literature = tmp_path / "lit"
    Library.open(Settings(library=literature)).import_files([PUBLISHED], defer_embedding=True)
    source = LocalLiterature.open(literature)
    found = {v.key: v for v in find_published(source, list(entries(PREPRINTS).values()))}
    assert set(found) == {"kingma2014adam", "DBLP:journals/corr/BahdanauCB14"}
    adam = found["kingma2014adam"].published
    assert (adam.entry_type, adam.venue, adam.year, adam.pages, adam.doi) == (
        "inproceedings", "3rd International Conference on Learning Representations (ICLR)", 2015, "1--15",
        "10.5555/iclr.2015.adam")
    # "Attention is all you need" by another first author, "Neural machine translation II" (a sequel), an
    # "Introduction": none of them is said
    assert "howpub" not in found and "notearxiv" not in found and "eprintonly" not in found


def test_the_bib_is_updated_in_place_every_other_entry_byte_for_byte_with_a_backup(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    original = PREPRINTS.read_bytes().replace(b"\n", b"\r\n")  # CRLF kept too
    bib.write_bytes(original)
    literature = tmp_path / "lit"
    Library.open(Settings(library=literature)).import_files([PUBLISHED], defer_embedding=True)
    found = find_in_bibs([bib], LocalLiterature.open(literature))
    assert isinstance(found, Preprints) and len(found.found) == 2 and found.asked == 10
    plan = WritePlan()
    plan.protect("your .bib", [bib], editable=True)
    [(path, keys, backup)] = write_published(plan, found)
    assert path == bib and keys == ["kingma2014adam", "DBLP:journals/corr/BahdanauCB14"]
    assert backup is not None and backup.read_bytes() == original
    new = bib.read_bytes().decode()
    old = original.decode()
    updated = entries(bib)
    assert updated["kingma2014adam"].entry_type == "inproceedings" and updated["kingma2014adam"].year == 2015
    assert "arXiv preprint arXiv:1412.6980" not in new
    # every other entry byte for byte: the text outside the two rewritten entries is the same
    from citefinder.library.bibupdate import entry_span

    def outside(text: str) -> str:
        for key in keys:
            start, end = entry_span(text, key) or (0, 0)
            text = text[:start] + "<>" + text[end:]
        return text

    assert outside(new) == outside(old) and "\r\n" in new
    assert update_text(new, {})[0] == new


def test_a_protected_bib_is_never_written() -> None:
    plan = WritePlan()
    plan.protect("your .bib", [PREPRINTS])
    with pytest.raises(Exception, match="your .bib"):
        write_published(plan, Preprints("x", ((PREPRINTS, _version("kingma2014adam")),), 1))


def _version(key: str) -> object:
    from citefinder.sources.published import PublishedVersion

    return PublishedVersion(key, "t", "f", Published("inproceedings", "ICLR", 2015))
