"""*Complete* on the Library page and what pairing a .bib says on the Cite page (AppTest over real libraries):
a paired .bib's library completed from the literature library on the Library page, its entries not found and the
ambiguous ones left alone listed (issue 44 item 6, issue 42 item 4), the editor saying where each completed field
came from; a paired .bib with a broken entry names that entry at pairing time and when it is read (issue 42
item 10). The work is citefinder.workflow.enrich."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from citefinder.config import Settings
from citefinder.library.link import link_file
from citefinder.library.store import Library
from citefinder.ui import paired_bib, state
from citefinder.ui.markdown import WORD_JOINER
from tests.app_support import sample_with_literature
from tests.test_sources_local import DATA

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240
BROKEN = "\n@article{broken2020,\n  title = {A Broken {Entry,\n  year = {2020}\n}\n"


def plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown).replace(WORD_JOINER, "").replace("**", "")


@pytest.fixture
def folder(tmp_path_factory, tmp_path, monkeypatch) -> Path:
    return sample_with_literature(tmp_path_factory, tmp_path, monkeypatch)


def test_the_library_page_completes_a_paired_bib_and_lists_what_it_left(folder):
    settings = Settings(library=folder)
    saved = paired_bib.save_bib(settings, "refs.bib", (DATA / "refs.bib").read_bytes())  # paired on the Cite page
    link_file(Library.open(state.paired_settings(settings, saved.parent)), saved)
    at = AppTest.from_file(str(ROOT / "pages" / "2_Library.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    complete = next(b for b in at.button if b.key == f"paired_enrich_{saved.parent.name}")
    assert complete.label == "Complete from papers-lit"
    complete.click().run()
    assert not at.exception and not at.error
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("5 of your 8 entries gained an abstract from papers-lit; 3 an identifier; 1 ambiguous "
                            "title left alone; 1 not found. Your .bib is unchanged.") for c in captions), captions
    left = next(e for e in at.expander if plain(e.label).startswith("Left alone (1)"))
    said = plain(" ".join(m.value for m in left.markdown))
    assert "deeplearning: ambiguous, left alone:" in said and "no year nor author on one side" in said
    missing = next(e for e in at.expander if plain(e.label) == "Not found in papers-lit (1)")
    assert "unknown2020: not found" in plain(" ".join(m.value for m in missing.markdown))
    # the editor says where each completed field came from
    papers = {p.key: p for p in Library.open(state.paired_settings(settings, saved.parent)).iter_papers()}
    at.selectbox(key=f"paired_edit_{saved.parent.name}").set_value(papers["he2016resnet"].doc_id).run()
    captions = [plain(c.value) for c in at.caption]
    assert ("Completed by CiteFinder, not in your .bib: abstract from papers-lit, arxiv:1512.03385; arXiv id from "
            "papers-lit, arxiv:1512.03385.") in captions
    abstract = next(t for t in at.text_area if t.label == "Abstract")
    assert abstract.value.startswith("Deeper neural networks") and "papers-lit" in (abstract.help or "")
    assert saved.read_bytes() == (DATA / "refs.bib").read_bytes()  # the user's .bib: as it was


def test_a_paired_bib_with_a_broken_entry_names_it(folder):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    data = (DATA / "refs.bib").read_bytes() + BROKEN.encode()
    at.file_uploader(key=paired_bib.UPLOAD).upload("my refs.bib", data, "application/x-bibtex").run()
    assert not at.exception and not at.error
    captions = [plain(c.value) for c in at.caption]
    assert any(c.startswith("Paired with my refs.bib (8 papers)") for c in captions), captions
    [warning] = [plain(w.value) for w in at.warning]
    assert warning.startswith("1 entry could not be read (my refs.bib:"), warning
    assert "broken2020" in warning and "line" in warning and warning.endswith(
        "It is left out: fix it in your my refs.bib and pair the file again."), warning
    # the fill reads it into its library, and names it again
    at.text_area(key=state.CITE_TEXT).set_value("Self-attention alone is all you need [CITATION].").run()
    next(b for b in at.button if b.label == "Find citations").click().run()
    assert not at.exception
    said = [plain(w.value) for w in at.warning]
    assert any(w.startswith("Of your my refs.bib, 1 entry could not be read (my refs.bib:") and "broken2020" in w
               for w in said), said


def test_one_entry_is_one_entry():
    assert paired_bib.check_bib("one.bib", b"@misc{a, title={One}}\n") == (1, None)
    from citefinder.library.link import unread_entries
    from citefinder.types import ImportFailure

    assert unread_entries([ImportFailure("refs.bib:3", "malformed BibTeX entry 'x' at line 3: unclosed")]) == (
        "1 entry could not be read (refs.bib:3: malformed BibTeX entry 'x' at line 3: unclosed)")
    many = [ImportFailure(f"refs.bib:{i}", "bad") for i in range(5)]
    assert unread_entries(many) == ("5 entries could not be read (refs.bib:0: bad; refs.bib:1: bad; refs.bib:2: "
                                    "bad; and 2 more)")
