"""``citefinder library enrich --from LIBRARY`` end to end (citefinder.sources.enrich over a real literature
library folder and the real library beside a .bib): abstracts and identifiers stored with their provenance, the
.bib and its export byte for byte as before, an ambiguous title listed and left alone, a second run adding
nothing, and a re-synced .bib keeping what was found (the user's own abstract replacing it)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.bibtex import papers_to_bibtex
from citefinder.library.link import library_beside, sync_all
from citefinder.library.store import Library
from citefinder.sources.enrich import provenance_text
from citefinder.types import Paper
from tests.test_sources_local import DATA, build_literature, snapshot

OWN_JSONL = ('{"title": "Generative adversarial nets", "authors": ["Ian J. Goodfellow"], "year": 2014, '
             '"abstract": "My own note on GANs."}\n')


pytestmark = pytest.mark.usefixtures("literature_cache")  # a cache of the test's own


@pytest.fixture(scope="module")
def literature(tmp_path_factory) -> Path:
    return build_literature(tmp_path_factory.mktemp("lit") / "papers-lit")


def export(library: Library) -> str:
    papers = sorted(library.iter_papers(), key=lambda p: (p.source or "", p.position or 0, p.doc_id))
    return papers_to_bibtex(papers)[0]


def by_key(library: Library) -> dict[str, Paper]:
    return {p.key or p.title: p for p in library.iter_papers()}


def test_enrich_a_bib_library_end_to_end(literature, tmp_path, capsys):
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "refs.bib", bib)
    own = tmp_path / "own.jsonl"
    own.write_text(OWN_JSONL)
    bib_bytes = bib.read_bytes()
    lit_before = snapshot(literature)
    folder = library_beside(bib)
    library = Library.open(Settings(library=folder))
    library.import_files([own])  # a paper not from the .bib: its export is made from its fields
    assert main(["library", "link", str(bib), "--library", str(folder)]) == 0
    library = Library.open(Settings(library=folder))
    export_before = export(library)
    capsys.readouterr()

    report = tmp_path / "enrich.json"
    assert main(["library", "enrich", "--from", str(literature), "--bib", str(bib), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "deeplearning: ambiguous, left alone: t:" in out and "unknown2020: not found" in out
    assert "vaswani2017: gained abstract from arxiv:1706.03762 (by arxiv)" in out
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("papers-lit: 9 of 9 papers lacked an abstract or an id; 5 gained an abstract, 1 a DOI, "
                              "3 an arXiv id")
    outcomes = {o["label"]: o for o in json.loads(report.read_text())["outcomes"]}
    assert outcomes["deeplearning"]["status"] == "ambiguous" and len(outcomes["deeplearning"]["candidates"]) == 2

    library = Library.open(Settings(library=folder))
    papers = by_key(library)
    vaswani, resnet, alex = papers["vaswani2017"], papers["he2016resnet"], papers["krizhevsky2017imagenet"]
    assert vaswani.abstract.startswith("The dominant sequence transduction models")
    assert vaswani.provenance == (("abstract", "papers-lit", "arxiv:1706.03762"),)
    assert provenance_text(vaswani) == "abstract from papers-lit, arxiv:1706.03762"
    # a queued paper of the literature library, by title (a year apart): its abstract and its arXiv id
    assert resnet.abstract.startswith("Deeper neural networks") and resnet.ids == (("arxiv", "1512.03385"),)
    assert provenance_text(resnet) == "abstract, arXiv id from papers-lit, arxiv:1512.03385"
    assert resnet.arxiv_id is None and resnet.doc_id == Library.open(Settings(library=folder)).match(resnet)
    assert alex.abstract.startswith("We trained a large") and alex.ids == ()  # found by its DOI; it has it
    assert papers["blei2003lda"].source_of("abstract") == ("papers-lit", "t:blei-lda-2001")  # 2001 vs 2003
    assert papers["lstm"].ids == (("doi", "10.1162/neco.1997.9.8.1735"),)
    assert papers["deeplearning"].abstract == "" and papers["deeplearning"].provenance == ()
    assert papers["unknown2020"].abstract == "" and papers["unknown2020"].provenance == ()
    bert = papers["devlin2019bert"]  # its own abstract stays; the arXiv id is found (its author read "et al.")
    assert bert.abstract == "The user's own abstract of BERT." and bert.provenance == (
        ("arxiv", "papers-lit", "arxiv:1810.04805"),)
    gan = papers["Generative adversarial nets"]
    assert gan.abstract == "My own note on GANs." and gan.ids == (("arxiv", "1406.2661"),)

    # the user's files and the literature library: byte for byte as before; the export too
    assert bib.read_bytes() == bib_bytes
    assert snapshot(literature) == lit_before
    assert export(library) == export_before
    # the dense and BM25 agents see the abstracts
    assert library.bm25_search("residual learning framework substantially deeper", 1)[0].doc_id == resnet.doc_id

    # again: nothing new
    assert main(["library", "enrich", "--from", str(literature), "--bib", str(bib), "--quiet"]) == 0
    again = capsys.readouterr().out
    assert "0 gained an abstract, 0 a DOI, 0 an arXiv id" in again and "deeplearning: ambiguous" in again
    assert "gained abstract" not in again
    assert by_key(Library.open(Settings(library=folder))) == papers


def test_a_resynced_bib_keeps_the_enrichment_and_the_users_own_abstract_wins(literature, tmp_path, capsys,
                                                                             monkeypatch):
    bib = tmp_path / "refs.bib"
    shutil.copy(DATA / "refs.bib", bib)
    monkeypatch.setenv("CITEFINDER_LITERATURE", str(literature))  # the setting names the source
    assert main(["library", "enrich", "--bib", str(bib), "--quiet"]) == 0
    capsys.readouterr()
    folder = library_beside(bib)
    text = bib.read_text()
    # the user edits two enriched entries: a note on one, their own abstract on the other
    text = text.replace("  journal = {CVPR},\n", "  journal = {CVPR},\n  note    = {Best paper},\n")
    text = text.replace("  journal = {Neural Computation},\n",
                        "  journal = {Neural Computation},\n  abstract = {My own summary of LSTM.},\n")
    bib.write_text(text)
    library = Library.open(Settings(library=folder))
    [report] = sync_all(library)
    assert report.changed and report.updated == 2 and report.added == 0 and report.removed == 0
    papers = by_key(library)
    resnet, lstm = papers["he2016resnet"], papers["lstm"]
    assert "Best paper" in (resnet.bibtex or "")
    assert resnet.abstract.startswith("Deeper neural networks")  # kept, once
    assert resnet.provenance == (("abstract", "papers-lit", "arxiv:1512.03385"),
                                 ("arxiv", "papers-lit", "arxiv:1512.03385"))
    assert resnet.ids == (("arxiv", "1512.03385"),)
    assert lstm.abstract == "My own summary of LSTM."  # the user's own now
    assert lstm.provenance == (("doi", "papers-lit", "doi:10.1162/neco.1997.9.8.1735"),)
    assert library.count() == 8
    digest = hashlib.sha256(bib.read_bytes()).hexdigest()
    assert main(["library", "enrich", "--bib", str(bib), "--quiet"]) == 0
    assert "0 gained an abstract" in capsys.readouterr().out
    assert hashlib.sha256(bib.read_bytes()).hexdigest() == digest


def test_enrich_without_a_source_says_how_to_name_one(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CITEFINDER_LITERATURE", raising=False)
    assert main(["library", "enrich", "--library", str(tmp_path / "lib")]) == 2
    assert "--from FOLDER" in capsys.readouterr().err
