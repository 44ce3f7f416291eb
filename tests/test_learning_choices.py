"""Learning knows who chose (issue 27 items 5 and 8): two works of one title are two memory records, a learned
pick is forgotten alone (``contexts forget``; a pick removed on the Cite page), a pack's null author is no
author "None", and a fill's own picks are not learned when the filled file is filled again; the next sentence's
pick is then the one it gets with learning off. Real library of tests/data/latex/refs.bib, real MiniLM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from citefinder.cli.main import main
from citefinder.library.contexts import api
from citefinder.library.contexts.memory import memory_of
from citefinder.library.contexts.records import record_from_json
from citefinder.types import Query, Selection, Slot, SlotResult
from citefinder.ui import picks

LATEX = Path(__file__).parent / "data" / "latex"


def test_a_null_author_is_dropped():
    record = record_from_json({"text": "x [CITATION]", "cited": {"title": "A", "authors": [None, "Ada Lovelace"]}})
    assert record.authors == ("Ada Lovelace",)


def test_two_works_of_one_title_are_two_records():
    a = record_from_json({"text": "Deep learning [CITATION].", "cited": {"title": "Deep learning", "year": 2015,
                                                                          "authors": ["Yann LeCun"]}})
    b = record_from_json({"text": "Deep learning [CITATION].", "cited": {"title": "Deep learning", "year": 2016,
                                                                          "authors": ["Ian Goodfellow"]}})
    assert a.rid != b.rid
    assert a.rid == record_from_json({"text": "Deep  learning [CITATION].",
                                      "cited": {"title": "Deep Learning", "year": 2015,
                                                "authors": ["Yann LeCun"]}}).rid


def test_a_removed_pick_is_taken_back_alone():
    slot = Slot(0, 0, 10, "[CITATION]", "Deep nets [CITATION].", "Deep nets [CITATION].")
    result = SlotResult(slot, Query("q"), (), Selection("found", None), ())
    assert picks.unlearned_pairs([result], {0: ("a", "b")}, {0: ("b",)}) == [("Deep nets [CITATION].", "a")]
    assert picks.unlearned_pairs([result], {}, {0: ("b",)}) == []  # the engine's pick was never the user's


@pytest.fixture
def bib_library(tmp_path, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "true")
    bib = tmp_path / "refs.bib"
    shutil.copy(LATEX / "refs.bib", bib)
    lib = tmp_path / "lib"
    assert main(["library", "import", str(bib), "--library", str(lib)]) == 0
    from citefinder.config import Settings
    from citefinder.library.store import Library

    return Library.open(Settings(library=lib)), lib


@pytest.mark.slow
def test_one_learned_pick_is_forgotten_and_the_others_stay(bib_library, capsys):
    library, lib = bib_library
    lecun, goodfellow = library.by_key("lecun2015deep"), library.by_key("goodfellow2016deep")
    bm25 = library.by_key("Robertson.Zaragoza.2009")
    sentence = "Deep learning has transformed perception [CITATION]."
    assert api.learn_picks(library, [(sentence, lecun.doc_id), (sentence, goodfellow.doc_id),
                                     ("BM25 ranks documents [CITATION].", bm25.doc_id)], citing="draft:x") == 3
    rows = [r for r in memory_of(library).matched_rows()]
    assert {r.doc_id for r in rows} == {lecun.doc_id, goodfellow.doc_id, bm25.doc_id}  # one title, two works
    capsys.readouterr()
    assert main(["contexts", "forget", "lecun2015deep", "--library", str(lib)]) == 0
    assert "forgot 1 learned pick of lecun2015deep" in capsys.readouterr().out
    library.close() if hasattr(library, "close") else None
    from citefinder.config import Settings
    from citefinder.library.store import Library

    again = Library.open(Settings(library=lib))
    assert {r.doc_id for r in memory_of(again).matched_rows()} == {goodfellow.doc_id, bm25.doc_id}
    assert main(["contexts", "forget", "nosuchkey", "--library", str(lib)]) == 2


@pytest.mark.slow
def test_a_second_fill_learns_nothing_and_the_next_pick_is_the_one_without_learning(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "true")
    for name in ("paper.tex", "refs.bib"):
        shutil.copy(LATEX / name, tmp_path / name)
    tex, bib = tmp_path / "paper.tex", tmp_path / "refs.bib"
    assert main(["fill", str(tex), "--bib", str(bib), "--in-place"]) == 0
    first = capsys.readouterr().err
    assert "learned 2 citations from paper.tex" in first  # the two the user wrote
    assert main(["fill", str(tex), "--bib", str(bib), "--in-place"]) == 0
    assert "learned" not in capsys.readouterr().err  # the first fill's picks are CiteFinder's, not the user's
    # a filled copy of a filled draft: still CiteFinder's picks
    shutil.copy(tex, tmp_path / "copy.tex")
    assert (tmp_path / ".citefinder-written.json").is_file()
    manifest = json.loads((tmp_path / ".citefinder-written.json").read_text())
    assert len(manifest["files"]["paper.tex"]["cites"]) >= 10
    new = tmp_path / "new.tex"
    new.write_text("\\section{Intro}\nDense passage retrieval with a dual encoder outperforms BM25 for open-domain "
                   "question answering \\citep{?}.\n", encoding="utf-8")
    assert main(["fill", str(new), "--bib", str(bib), "-o", str(tmp_path / "on.tex")]) == 0
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    from citefinder.config import Settings
    from citefinder.library.link import library_beside
    from citefinder.library.store import Library

    library = Library.open(Settings(library=library_beside(bib)))
    api.forget(library, ["user"])
    assert main(["fill", str(new), "--bib", str(bib), "-o", str(tmp_path / "off.tex")]) == 0
    assert (tmp_path / "on.tex").read_text() == (tmp_path / "off.tex").read_text()
