"""A library linked to the user's .bib / Better BibTeX CSL-JSON: real Chroma, real bm25s, real MiniLM.

Edits between two opens (add, change, remove an entry) are applied, and only new papers and papers
whose text changed are embedded again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_support import CountingEmbedder

from citefinder.config import Settings
from citefinder.library.link import link_file, linked_files, open_library, sync_all, unlink_file
from citefinder.library.store import Library

pytestmark = pytest.mark.slow

LATEX = Path(__file__).parent / "data" / "latex"

NEW_ENTRY = """
@inproceedings{Clark.Luong.ea.2020,
  title     = {{ELECTRA}: Pre-training Text Encoders as Discriminators Rather Than Generators},
  author    = {Clark, Kevin and Luong, Minh-Thang and Le, Quoc V. and Manning, Christopher D.},
  booktitle = {International Conference on Learning Representations},
  year      = {2020},
  abstract  = {Replaced token detection trains a discriminator to tell which input tokens a small generator replaced.}
}
"""


@pytest.fixture(scope="module")
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


def _edit(bib: Path) -> None:
    """Add ELECTRA, change Adam's abstract, rename Dropout's key, remove the LSTM entry."""
    text = bib.read_text(encoding="utf-8")
    start = text.index("@article{Hochreiter.Schmidhuber.1997")
    end = text.index("@inproceedings{Cormack")
    text = text[:start] + text[end:]
    text = text.replace("Adam is a first-order gradient-based optimizer",
                        "Adam is a first-order optimizer, simple to implement,")
    text = text.replace("@article{Srivastava.Hinton.ea.2014,", "@article{srivastava2014dropout,")
    bib.write_text(text + NEW_ENTRY, encoding="utf-8")


def test_linked_bib_follows_edits_without_re_embedding_unchanged_papers(tmp_path, embedder):
    bib = tmp_path / "refs.bib"
    shutil.copy(LATEX / "refs.bib", bib)
    settings = Settings(library=tmp_path / "lib")
    library = Library.open(settings, embedder=embedder)
    before = embedder.encoded
    report = link_file(library, bib)
    assert (report.added, report.embedded, report.failures) == (24, 24, ())
    assert embedder.encoded - before == 24
    assert linked_files(library) == [bib.resolve()]
    assert library.by_key("Liu.Ott.Goyal.ea.2019").title == "RoBERTa: A Robustly Optimized BERT Pretraining Approach"
    assert library.by_key("lecun2015deep").doc_id != library.by_key("goodfellow2016deep").doc_id

    # opening again with the file unchanged: nothing is read or embedded
    before = embedder.encoded
    library = open_library(settings, embedder=embedder)
    assert [r.changed for r in sync_all(library)] == [False]
    assert embedder.encoded == before

    _edit(bib)
    adam_id = library.by_key("Kingma.Ba.2015").doc_id
    before = embedder.encoded
    (report,) = sync_all(library)
    assert (report.added, report.updated, report.removed) == (1, 2, 1)
    assert report.unchanged == 24 - 3
    # re-embedded: the new entry and Adam (its abstract changed); the renamed key and the 21 others: none
    assert report.embedded == 2 and embedder.encoded - before == 2
    assert library.count() == 24
    assert library.by_key("Hochreiter.Schmidhuber.1997") is None
    assert library.by_key("Clark.Luong.ea.2020").year == 2020
    assert library.by_key("Srivastava.Hinton.ea.2014") is None
    assert library.by_key("srivastava2014dropout").title.startswith("Dropout")
    adam = library.by_key("Kingma.Ba.2015")
    assert adam.doc_id == adam_id and "simple to implement" in adam.abstract
    assert [h.doc_id for h in library.bm25_search("simple to implement optimizer", 1)] == [adam_id]

    # and nothing more on the next open
    before = embedder.encoded
    assert [r.changed for r in sync_all(open_library(settings, embedder=embedder))] == [False]
    assert embedder.encoded == before


def test_entries_already_in_the_library_get_the_key_and_are_not_removed_with_the_file(tmp_path, embedder):
    settings = Settings(library=tmp_path / "lib")
    library = Library.open(settings, embedder=embedder)
    record = {"doc_id": "arxiv:1907.11692", "title": "RoBERTa: A Robustly Optimized BERT Pretraining Approach",
              "authors": ["Yinhan Liu"], "year": 2019, "abstract": "BERT was undertrained."}
    (tmp_path / "mine.jsonl").write_text(json.dumps(record), encoding="utf-8")
    assert library.import_files([tmp_path / "mine.jsonl"]).added == 1
    assert library.get(["arxiv:1907.11692"])[0].key is None

    csl = tmp_path / "My Library.json"
    shutil.copy(LATEX / "refs-bbt.json", csl)
    report = link_file(library, csl)
    assert (report.added, report.updated) == (4, 1)  # RoBERTa was there: it only gets its key
    assert library.by_key("Liu.Ott.Goyal.ea.2019").doc_id == "arxiv:1907.11692"
    assert library.by_key("Robertson.Zaragoza.2009") is not None  # a key given only as "id"

    items = json.loads(csl.read_text(encoding="utf-8"))
    csl.write_text(json.dumps([i for i in items if i["id"] not in ("Liu.Ott.Goyal.ea.2019", "lecun2015deep")]))
    (report,) = sync_all(library)
    assert report.removed == 1  # LeCun came only from the file; RoBERTa was the user's before
    assert library.by_key("lecun2015deep") is None
    assert library.get(["arxiv:1907.11692"])
    assert unlink_file(library, csl) and linked_files(library) == []


def test_reimporting_an_updated_bib_updates_the_stored_key(tmp_path, embedder):
    bib = tmp_path / "refs.bib"
    bib.write_text((LATEX / "refs.bib").read_text(encoding="utf-8"), encoding="utf-8")
    library = Library.open(Settings(library=tmp_path / "lib"), embedder=embedder)
    assert library.import_files([bib]).added == 24
    bib.write_text(bib.read_text(encoding="utf-8").replace("{Liu.Ott.Goyal.ea.2019,", "{liu2019roberta,"))
    before = embedder.encoded
    report = library.import_files([bib])
    assert (report.added, report.duplicates, report.updated) == (0, 23, ("liu2019roberta",))
    assert embedder.encoded == before
    assert library.by_key("Liu.Ott.Goyal.ea.2019") is None
    assert library.by_key("liu2019roberta").arxiv_id == "1907.11692"
