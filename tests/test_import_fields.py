"""A later import of a work brings the fields the stored record lacks (issue 35, item 12): a .bib entry read after
the CSL-JSON record of the same work gives it all its authors, its abstract and DOI (searchable at once, the
vector embedded again), whatever the order of the imports, while the user's .bib entry stays the exported text;
and `library import` says which stored papers it changed, crossref entries included. Real Chroma, bm25s, MiniLM."""

from __future__ import annotations

import json

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.records import embedding_text
from citefinder.library.store import Library
from citefinder.types import Paper

pytestmark = pytest.mark.slow

ABSTRACT = "We prune hedgehog burrows with a quokka heuristic."
BIB = ("@article{prickle2021tunnels,\n  title = {Hedgehogs Tunnelling Under Frozen Meadows},\n"
       "  author = {Prickle, Ann and Quill, Bo and Spine, Cy},\n  journal = {Journal of Small Mammals},\n"
       "  year = {2021},\n  doi = {10.5555/hog.2021.7},\n  abstract = {" + ABSTRACT + "}\n}\n")
CSL = [{"id": "prickle2021zot", "type": "article-journal", "title": "Hedgehogs tunnelling under frozen meadows",
        "author": [{"family": "Prickle", "given": "Ann"}], "issued": {"date-parts": [[2021]]}}]


def _files(tmp_path):
    ours, zotero = tmp_path / "ours.bib", tmp_path / "zotero.json"
    ours.write_text(BIB, encoding="utf-8")
    zotero.write_text(json.dumps(CSL), encoding="utf-8")
    return ours, zotero


@pytest.mark.parametrize("order", ["csl first", "bib first"])
def test_the_bib_brings_authors_abstract_and_doi_whatever_the_order(tmp_path, capsys, order):
    ours, zotero = _files(tmp_path)
    lib = str(tmp_path / "lib")
    first, second = (zotero, ours) if order == "csl first" else (ours, zotero)
    assert main(["library", "import", str(first), "--library", lib]) == 0
    capsys.readouterr()
    assert main(["library", "import", str(second), "--library", lib]) == 0
    out = capsys.readouterr().out
    if order == "csl first":  # the stored CSL record changed: said as an update
        assert "added 0, updated 1 (prickle2021tunnels), duplicates skipped 0" in out
    library = Library.open(Settings(library=lib))
    (paper,) = list(library.iter_papers())
    assert paper.key == "prickle2021tunnels" and paper.bibtex is not None and paper.bibtex.strip() == BIB.strip()
    assert paper.authors == ("Ann Prickle", "Bo Quill", "Cy Spine")
    assert (paper.abstract, paper.doi) == (ABSTRACT, "10.5555/hog.2021.7")
    assert library.bm25_search("quokka heuristic", 1)[0].doc_id == paper.doc_id  # retrieval sees the abstract
    stored = library._collection.get(ids=[paper.doc_id], include=["embeddings", "documents"])
    assert stored["documents"] == [ABSTRACT]
    vector = library.embedder.encode([embedding_text(paper)])[0]
    assert float(vector @ stored["embeddings"][0]) > 0.999  # embedded again with its abstract
    assert library.match(Paper("x", "Another title", doi=paper.doi)) == paper.doc_id  # the DOI is a dedupe key now


def test_a_deferred_import_queues_the_paper_to_embed_again(tmp_path, capsys):
    ours, zotero = _files(tmp_path)
    lib = str(tmp_path / "lib")
    assert main(["library", "import", str(zotero), "--library", lib]) == 0
    assert main(["library", "import", str(ours), "--defer-embedding", "--library", lib]) == 0
    assert "updated 1 (prickle2021tunnels)" in capsys.readouterr().out
    library = Library.open(Settings(library=lib))
    assert (library.count(), library.pending_count(), len(library.ensure_bm25())) == (1, 1, 1)
    assert library.get([p.doc_id for p in library.iter_papers()])[0].abstract == ABSTRACT
    assert library.embed_pending() == 1
    assert (library.count(), library.embedded_count(), library.pending_count()) == (1, 1, 0)
    assert library.problems() == []


CROSSREF = ("@inproceedings{widgets21,\n  crossref = {proc21},\n  title = {Deep Widgets for Parsing},\n"
            "  author = {Doe, Jane and Roe, Rick},\n  abstract = {We parse widgets with gears.}\n}\n\n"
            "@proceedings{proc21,\n  title = {Proceedings of the Widget Workshop},\n  year = {2021}\n}\n")


def test_a_crossref_entry_of_a_stored_work_is_reported_as_the_update_it_is(tmp_path, capsys):
    zotero = tmp_path / "zotero.json"
    zotero.write_text(json.dumps([{"id": "widgets21", "type": "paper-conference", "title": "Deep widgets for parsing",
                                   "author": [{"family": "Doe", "given": "Jane"}],
                                   "issued": {"date-parts": [[2021]]}}]), encoding="utf-8")
    ours = tmp_path / "ours.bib"
    ours.write_text(CROSSREF, encoding="utf-8")
    lib = str(tmp_path / "lib")
    assert main(["library", "import", str(zotero), "--library", lib]) == 0
    capsys.readouterr()
    assert main(["library", "import", str(ours), "--library", lib]) == 0
    out = capsys.readouterr().out
    assert "added 1, updated 1 (widgets21), duplicates skipped 0, failures 0" in out  # the parent is new
    library = Library.open(Settings(library=lib))
    paper = library.by_key("widgets21")
    assert paper is not None and paper.source == "ours.bib" and paper.authors == ("Jane Doe", "Rick Roe")
    assert paper.bibtex is not None and "crossref = {proc21}" in paper.bibtex and "@proceedings{proc21" in paper.bibtex
    assert paper.abstract == "We parse widgets with gears."
    assert main(["library", "import", str(ours), "--library", lib]) == 0  # again: nothing changes, nothing said
    assert "added 0, duplicates skipped 2, failures 0" in capsys.readouterr().out
