"""Your own papers are never hidden as "sample" (issue 29, item 1): a real .bib imported on the Library page over
the sample library makes every one of its works the user's — the three whose key the sample also uses
(devlin2019bert, luong2015effective, glorot2010understanding), the two the sample holds under other keys, and
the new one — with the user's key and entry; Search and the Cite page then find them (samples are left out of
suggestions once the user has papers)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from app_support import build_sample_library, chromium, paste_draft, streamlit_server, upload, wait_progressing
from citefinder.config import Settings
from citefinder.library import sample
from citefinder.library.store import Library

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
OWN = ROOT / "tests" / "data" / "own-over-sample.bib"
BERT = "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"


def own_keys() -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", OWN.read_text(), flags=re.M)


def test_a_real_bib_over_the_sample_is_all_the_users_and_found(tmp_path) -> None:
    library = tmp_path / "library"
    shutil.copytree(build_sample_library(tmp_path.parent / "ownership-sample"), library,
                    ignore=shutil.ignore_patterns("workspace"))
    keys = own_keys()
    assert len(keys) == 6
    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(f"{url}/Library")
        wait_progressing(page.get_by_role("button", name="Import").first)
        upload(page, str(OWN), "Import 1 file").click()
        summary = page.locator("[data-testid='stAlert']", has_text="Last import")
        wait_progressing(summary)
        # each sample work became the user's: an update, said as one
        assert "1 added, 5 updated (" in summary.inner_text(), summary.inner_text()

        stored = Library.open(Settings(library=library))
        for key in keys:  # every entry is the user's: their key, their file, their entry text
            paper = stored.by_key(key)
            assert paper is not None, key
            assert paper.source.endswith(OWN.name) and not sample.is_sample(paper), (key, paper.source)  # "0-own-..."
            assert paper.bibtex is not None and paper.bibtex.lstrip().split(",")[0].endswith("{" + key), key
        assert sample.counts(stored).own == 6

        page.goto(f"{url}/Search")
        page.get_by_label("Question or topic").fill("masked language modeling (BERT)")
        page.get_by_role("button", name="Search").click()
        wait_progressing(page.get_by_text(BERT).filter(visible=True).first)
        wait_progressing(page.get_by_text("devlin2019bert").filter(visible=True).first)

        page.goto(url)
        paste_draft(page, "Pre-training deep bidirectional transformers gives BERT [CITATION], which set a new "
                          "state of the art on GLUE.")
        wait_progressing(page.get_by_text("citation slot found"))
        page.get_by_role("button", name="Find citations").click()
        # the card's title, not the fill's progress table (its cells are never visible, and it can come first)
        wait_progressing(page.get_by_text(BERT).filter(visible=True).first)
        page.get_by_text("devlin2019bert").filter(visible=True).first.wait_for()
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")
