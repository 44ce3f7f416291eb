"""Learning from the user, wired in (issue 20 part 3): a pick on the Cite page, the filled cites of a .tex given
to ``fill``, the citations ``check`` finds fitting and the replacements ``check --fix`` applies all join the
library's citation-context memory as the user's own, and nothing does when ``learn_from_picks`` is off; a
failure to learn keeps the pick. The Settings page switches it, the Library page counts and forgets, the
candidate cards say how the memory saw a paper cited. Real library (tests/data/latex/refs.bib), real MiniLM,
AppTest for the pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app_support import plain
from citefinder.config import Settings
from citefinder.library.contexts import api
from citefinder.library.contexts.memory import memory_of
from citefinder.library.store import Library
from citefinder.pipeline.evidence import elsewhere_line
from citefinder.types import Query, Selection, Slot, SlotResult
from citefinder.ui import picks, state, workspace
from latex_support import copied_library, make_refs_library

DATA = Path(__file__).resolve().parent / "data"
LATEX = DATA / "latex"
ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180
TWO_SLOTS = ("Sequence transduction no longer needs recurrence, since attention is all you need [CITATION]. "
             "The bench was quiet that morning. "
             "Reciprocal rank fusion merges several rankings and outperforms Condorcet fusion [CITATION].")
ELSEWHERE = "cited elsewhere as:"


def user_rows(library: Library) -> list:
    return [r for r in memory_of(library).matched_rows() if r.origin == "user"]


# --- pure -----------------------------------------------------------------------------------------

def slot_result(index: int, focus: str) -> SlotResult:
    slot = Slot(index, 0, 1, "[CITATION]", focus.replace("[OTHER]", "[CITATION]"), focus, focus=focus)
    return SlotResult(slot, Query(focus), (), Selection("not_found"), ())


def test_a_change_of_picks_teaches_the_papers_newly_picked_only():
    results = [slot_result(0, "A [CITATION] and [OTHER]."), slot_result(1, "B [CITATION].")]
    assert picks.learned_pairs(results, {}, {0: ("x",)}) == [("A [CITATION] and [OTHER].", "x")]
    assert picks.learned_pairs(results, {0: ("x",)}, {0: ("x", "y")}) == [("A [CITATION] and [OTHER].", "y")]
    assert picks.learned_pairs(results, {}, {1: ("x", "y")}) == [("B [CITATION].", "x"), ("B [CITATION].", "y")]
    assert picks.learned_pairs(results, {0: ("x", "y")}, {0: ("y", "x")}) == []  # reordered
    assert picks.learned_pairs(results, {0: ("x", "y")}, {0: ("y",)}) == []  # removed: nothing unlearned
    assert picks.learned_pairs(results, {}, {0: ()}) == []  # left empty
    assert picks.learned_pairs(results, {}, {7: ("x",)}) == []  # no such slot
    assert picks.draft_name("paper.tex", "whatever") == "draft:paper.tex"
    named = picks.draft_name(None, "Same start. " + "x" * 3000)
    assert named == picks.draft_name(None, "Same  start. " + "x" * 3000 + " edited far on") != picks.draft_name(
        None, "Other start.")


def test_the_card_line_says_where_the_sentence_comes_from():
    pack = {"text": "We optimise with Adam [CITATION].", "citing": "acl:P19-1", "citing_title": "A parser",
            "source": "acl-anthology", "origin": "pack"}
    assert elsewhere_line(pack) == "cited elsewhere as: “We optimise with Adam [CITATION].” (A parser, acl-anthology)"
    assert elsewhere_line({**pack, "origin": "user"}).endswith("(your earlier pick)")
    assert elsewhere_line({**pack, "text": "word " * 100}, max_chars=30).count("word") < 10


# --- a real library -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def refs_library(tmp_path_factory) -> Path:
    return make_refs_library(tmp_path_factory.mktemp("hooks-library") / "library")


@pytest.fixture
def library_path(refs_library, tmp_path) -> Path:
    return copied_library(refs_library, tmp_path)


@pytest.mark.slow
def test_fill_learns_the_cites_a_tex_already_holds(tmp_path, capsys, monkeypatch):
    from citefinder.cli.main import main
    from citefinder.library.link import library_beside

    for name in ("paper.tex", "refs.bib"):
        shutil.copy(LATEX / name, tmp_path / name)
    tex, bib = tmp_path / "paper.tex", tmp_path / "refs.bib"
    assert main(["fill", str(tex), "--bib", str(bib)]) == 0
    assert "learned 2 citations from paper.tex" in capsys.readouterr().err
    library = Library.open(Settings(library=library_beside(bib)))
    rows = user_rows(library)
    assert {r.doc_id for r in rows} == {library.by_key("Peters.Neumann.ea.2018").doc_id,
                                        library.by_key("Karpukhin.Oguz.ea.2020").doc_id}
    assert all(r.citing == f"draft:{tex.name}" and "[CITATION]" in r.text for r in rows)  # as the Cite page names it
    assert any("Contextual word vectors from a bidirectional language model followed [CITATION]" in r.text
               for r in rows)
    assert main(["fill", str(tex), "--bib", str(bib), "-o", str(tmp_path / "again.tex")]) == 0
    assert "learned" not in capsys.readouterr().err  # held already
    api.forget(library)
    monkeypatch.setenv("CITEFINDER_LEARN_FROM_PICKS", "false")
    assert main(["fill", str(tex), "--bib", str(bib), "-o", str(tmp_path / "off.tex")]) == 0
    assert "learned" not in capsys.readouterr().err and not user_rows(library)


@pytest.mark.slow
def test_check_learns_the_fitting_citations_and_the_fixes(tmp_path, capsys):
    from citefinder.cli.main import main
    from citefinder.library.link import library_beside

    tex, bib = tmp_path / "checked.tex", tmp_path / "refs.bib"
    shutil.copy(LATEX / "checked.tex", tex)
    shutil.copy(LATEX / "refs.bib", bib)
    out = tmp_path / "check.json"
    assert main(["check", str(tex), "--bib", str(bib), "--json", str(out)]) == 1
    records = json.loads(out.read_text(encoding="utf-8"))["citations"]
    fits = [r for r in records if r["verdict"] == "fits"]
    assert 0 < len(fits) < len(records)
    # \citep{lecun2015deep, goodfellow2016deep} cites two works titled "Deep learning" in one sentence: a memory
    # record's identity includes the cited work's (issue 27 item 8), so they stay two records
    assert f"learned {len(fits)} citations from checked.tex" in capsys.readouterr().err
    library = Library.open(Settings(library=library_beside(bib)))
    learned = {(r.doc_id, r.text) for r in user_rows(library)}
    assert len(learned) == len(fits)
    deep = {library.by_key("lecun2015deep").doc_id, library.by_key("goodfellow2016deep").doc_id}
    docs = {d for d, _ in learned}
    assert docs == {library.by_key(r["key"]).doc_id for r in fits} and docs & deep == deep
    wrong = next(r for r in records if r["key"] == "He.Zhang.ea.2016" and r["verdict"] == "likely wrong")
    resnet = library.by_key("He.Zhang.ea.2016").doc_id
    assert not any(d == resnet and "BM25" in t for d, t in learned)  # a likely wrong citation teaches nothing

    number = records.index(wrong) + 1
    assert main(["check", str(tex), "--fix", f"#{number}=Robertson.Zaragoza.2009"]) == 0
    assert "learned 1 citation from checked.tex" in capsys.readouterr().err
    bm25 = library.by_key("Robertson.Zaragoza.2009").doc_id
    fixed = [r for r in user_rows(library) if r.doc_id == bm25]
    assert len(fixed) == 1 and "BM25" in fixed[0].text and fixed[0].text.count("[CITATION]") == 1
    assert tex.read_bytes() == (LATEX / "checked.tex").read_bytes()


# --- the pages ------------------------------------------------------------------------------------

def cite_page(library: Path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library))
    workspace.clear_draft(library)
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)


def find(at, text: str):
    at.run()
    at.text_area(key=state.CITE_TEXT).set_value(text).run()
    return next(b for b in at.button if b.label == "Find citations").click().run()


def cards_text(at) -> str:
    return "\n".join(plain(m.value) for m in at.markdown)


@pytest.mark.slow
def test_a_pick_on_the_cite_page_joins_the_memory_and_shows_on_the_cards(library_path, monkeypatch):
    from citefinder.ui import resources

    at = find(cite_page(library_path, monkeypatch), TWO_SLOTS)
    assert not at.exception
    run = at.session_state[state.CITE_RUN]
    assert ELSEWHERE not in cards_text(at)  # no memory: nothing said
    other = run.results[0].candidates[1].doc_id
    at.button(key=f"{run.pick_key(0)}_2").click().run()  # Use this, on the second candidate
    assert not at.exception and at.session_state[state.CITE_CHOICES] == {0: (other,)}
    library = Library.open(Settings(library=library_path))
    (row,) = user_rows(library)
    assert row.doc_id == other and row.text == run.results[0].slot.focus
    assert row.citing == picks.draft_name(None, TWO_SLOTS)

    accepted = picks.selector_pick(run.results[1])
    at.button(key=f"{run.pick_key(1)}accept").click().run()  # Accept, next: keeping the engine's pick teaches it
    assert {r.doc_id for r in user_rows(library)} == {other, *accepted}

    # a new fill: the picked paper's card says how the user cited it
    at = next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception
    text = cards_text(at)
    assert f"{ELSEWHERE} “{row.text}” (your earlier pick)" in text

    # switched off for this session: a change teaches nothing
    at.session_state[state.SETTINGS] = at.session_state[state.SETTINGS].with_overrides(learn_from_picks=False)
    at.run()
    run = at.session_state[state.CITE_RUN]
    third = run.results[0].candidates[2].doc_id
    at.button(key=f"{run.pick_key(0)}_3").click().run()
    assert not at.exception and at.session_state[state.CITE_CHOICES][0] == (third,)
    assert third not in {r.doc_id for r in user_rows(library)}

    # learning fails (the paper left the library meanwhile): the pick stands, a warning says so
    at.session_state[state.SETTINGS] = at.session_state[state.SETTINGS].with_overrides(learn_from_picks=True)
    at.run()
    fourth = run.results[0].candidates[3].doc_id
    resources.get_library(Settings(library=library_path)).remove([fourth])
    at.button(key=f"{run.pick_key(0)}_4").click().run()
    assert not at.exception and at.session_state[state.CITE_CHOICES][0] == (fourth,)
    assert any("could not be learned" in t.value for t in at.toast)
    assert fourth not in {r.doc_id for r in user_rows(library)}


@pytest.mark.slow
def test_settings_page_switches_learning_and_library_page_counts_and_forgets(library_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from citefinder.ui import user_settings

    monkeypatch.setenv("CITEFINDER_LIBRARY", str(library_path))
    at = AppTest.from_file(str(ROOT / "pages" / "3_Settings.py"), default_timeout=TIMEOUT).run()
    toggle = next(t for t in at.toggle if t.label == "Learn from my picks")
    assert toggle.value is True
    toggle.set_value(False).run()
    assert not at.exception and at.session_state[state.SETTINGS].learn_from_picks is False
    assert user_settings.load_settings(Settings())[0].learn_from_picks is False  # saved for this user
    assert next(t for t in at.toggle if t.label == "Learn from my picks").value is False

    library = Library.open(Settings(library=library_path))
    page = AppTest.from_file(str(ROOT / "pages" / "2_Library.py"), default_timeout=TIMEOUT).run()
    assert not page.exception and "Citation contexts" in [h.value for h in page.subheader]
    assert any("No citation contexts yet" in m.value for m in page.markdown)
    api.learn_pick(library, "Dense passage retrieval [CITATION] embeds questions.",
                   library.by_key("Karpukhin.Oguz.ea.2020").doc_id)
    page = AppTest.from_file(str(ROOT / "pages" / "2_Library.py"), default_timeout=TIMEOUT).run()
    assert any("1 learned from your picks" in m.value for m in page.markdown)
    page = next(b for b in page.button if b.label.startswith("Forget")).click().run()
    assert not page.exception and not user_rows(library)
