"""The one identity rule (citefinder.library.identity): surnames, same work, and the duplicate it prevents."""

from __future__ import annotations

import json

import pytest

from citefinder.config import Settings
from citefinder.library.bibtex import bib_key_for, papers_to_bibtex
from citefinder.library.identity import first_author_surname, identity, make_doc_id, same_work, surname
from citefinder.types import Paper


@pytest.mark.parametrize(
    "author, expected",
    [
        ("Yann LeCun", "lecun"),
        ("LeCun, Yann", "lecun"),
        ("LeCun, Y.", "lecun"),
        ("Y. LeCun", "lecun"),
        ("LeCun Y", "lecun"),
        ("Smith JA", "smith"),
        ("J.-P. Sartre", "sartre"),
        ("Laurens van der Maaten", "maaten"),
        ("van der Maaten, Laurens", "maaten"),
        ("Fernando De la Torre", "torre"),
        ("de la Torre, Fernando", "torre"),
        ("Martin Luther King Jr.", "king"),
        ("King, Jr., Martin Luther", "king"),
        ("Hinrich Schütze", "schutze"),
        ("Sch{\\\"u}tze, Hinrich", "schutze"),
        ("Cathy O'Neil", "oneil"),
        ("王小明", "王小明"),
        ("Иван Петров", "петров"),
        ("Петров, Иван", "петров"),
        ("", ""),
    ],
)
def test_one_surname_for_every_way_a_name_is_written(author, expected):
    assert surname(author) == expected


def test_the_same_work_whichever_way_its_first_author_is_written():
    bib = Paper("t:a", "Universal Transformers", ("Dehghani, Mostafa", "Gouws, Stephan"), 2019)
    jsonl = Paper("t:b", "Universal Transformers", ("Mostafa Dehghani", "Stephan Gouws"), 2018)
    other = Paper("t:c", "Universal Transformers", ("Ada Lovelace",), 2019)
    assert first_author_surname(bib) == first_author_surname(jsonl) == "dehghani"
    assert same_work("title:universal transformers", identity(bib), jsonl)
    assert not same_work("title:universal transformers", bib, other)
    assert make_doc_id(bib.__class__("", bib.title, bib.authors, 2019)) == make_doc_id(
        jsonl.__class__("", jsonl.title, jsonl.authors, 2019))


def test_the_bibtex_writer_and_its_generated_keys_use_the_same_rule():
    bib = Paper("t:a", "Visualizing Data using t-SNE", ("van der Maaten, Laurens", "Hinton, Geoffrey"), 2008)
    jsonl = Paper("t:b", "Visualizing Data using t-SNE", ("Laurens van der Maaten", "Geoffrey Hinton"), 2008)
    assert bib_key_for(bib) == bib_key_for(jsonl) == "maaten2008visualizing"
    text, keys = papers_to_bibtex([bib, jsonl])
    assert text.count("@") == 1 and keys["t:a"] == keys["t:b"]


@pytest.mark.slow
def test_a_last_first_bib_entry_and_a_first_last_record_are_stored_once(tmp_path):
    from citefinder.library.store import Library

    # the JSONL record writes "Last, First"; the .bib reader hands on "First Last"
    record = {"doc_id": "t:ut", "title": "Universal Transformers", "authors": ["Dehghani, Mostafa", "Gouws, Stephan"],
              "year": 2019, "abstract": "Self-attentive recurrent sequence models."}
    (tmp_path / "papers.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tmp_path / "refs.bib").write_text(
        "@inproceedings{dehghani2019universal, title={Universal Transformers}, "
        "author={Dehghani, Mostafa and Gouws, Stephan}, year={2019}}\n", encoding="utf-8")
    library = Library.open(Settings(library=tmp_path / "library"))
    first = library.import_files([tmp_path / "papers.jsonl"])
    second = library.import_files([tmp_path / "refs.bib"])
    # the .bib entry becomes the stored work's entry and key: an update, said as one (issue 27)
    assert (first.added, second.added, second.duplicates, second.updated) == (1, 0, 0, ("dehghani2019universal",))
    assert library.count() == 1
    assert library.by_key("dehghani2019universal").doc_id == "t:ut"  # the .bib's key joins the stored paper
