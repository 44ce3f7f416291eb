"""A LaTeX draft paired with its own .bib, in a real browser: `streamlit run app.py` driven by Debian's Chromium.

The researcher uploads tests/data/latex/paper.tex as the draft and tests/data/latex/refs.bib through
"Pair with your .bib", clicks *Find citations*, and downloads the filled .tex. Every key the app wrote
into a \\cite-family command must be an entry key of refs.bib (so the .tex compiles against it), at
least one slot must be filled, and nothing outside the placeholders may change.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import bibtexparser
import pytest

from app_support import CHROMIUM, CHROMIUM_ARGS, build_sample_library, streamlit_server, wait_progressing
from citefinder.text.slots import find_slots
from latex_support import assert_only_placeholders_changed, cited_keys

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATEX = Path(__file__).parent / "data" / "latex"


@contextlib.contextmanager
def fresh_chromium(viewport: tuple[int, int] = (1400, 1000)):
    """Debian's Chromium (never `playwright install`), headless, with a fresh user-data-dir; yields a page."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="citefinder-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, accept_downloads=True,
            viewport={"width": viewport[0], "height": viewport[1]},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser-latex")
    library = build_sample_library(root / "library")
    with streamlit_server(library, root / "server.log") as url, fresh_chromium() as page:
        page.goto(url)
        wait_progressing(page.get_by_role("button", name="Find citations"))
        yield url, page, root


def bib_keys(path: Path) -> set[str]:
    """Entry keys of a .bib file, read by bibtexparser (not by the app's own reader)."""
    library = bibtexparser.parse_file(str(path))
    assert not library.failed_blocks
    return {entry.key for entry in library.entries}


def test_tex_paired_with_its_bib_downloads_a_tex_citing_only_its_keys(app):
    url, page, root = app
    tex = (LATEX / "paper.tex").read_text(encoding="utf-8")
    keys = bib_keys(LATEX / "refs.bib")
    assert len(keys) == 24

    uploads = page.locator('input[type="file"]')
    uploads.nth(0).set_input_files(str(LATEX / "paper.tex"))  # the draft
    wait_progressing(page.get_by_text("Text from"))
    wait_progressing(page.get_by_text("citation slots found"))
    paired = page.locator("[data-testid='stFileUploader']").filter(has_text="Pair with your .bib")
    paired.locator('input[type="file"]').set_input_files(str(LATEX / "refs.bib"))
    wait_progressing(paired.get_by_text("refs.bib"))
    wait_progressing(page.get_by_text("Paired with"))  # the server has checked and paired it

    page.get_by_role("button", name="Find citations").click()
    draft_button = page.get_by_role("button", name="Download draft with \\cite")
    wait_progressing(draft_button)
    main = page.locator("[data-testid='stMain']")
    assert main.locator("[data-testid='stException']").count() == 0
    assert "Traceback" not in main.inner_text()

    with page.expect_download() as download:
        draft_button.click()
    assert download.value.suggested_filename.endswith(".tex")
    filled = Path(download.value.path()).read_text(encoding="utf-8")

    # only the placeholders' spans changed: the text around them is byte for byte the upload's
    slots = find_slots(tex)
    became = assert_only_placeholders_changed(tex, filled, slots)
    assert len(slots) == 22 and len(became) == len({(s.start, s.end) for s in slots})  # \citep{?, ?} is one span
    head, tail = tex[:min(s.start for s in slots)], tex[max(s.end for s in slots):]
    assert filled.startswith(head) and filled.endswith(tail) and len(head) > 200

    # every key the app wrote is one of refs.bib's entry keys
    before = cited_keys(tex)
    new = list(cited_keys(filled))
    for key in before:
        new.remove(key)
    assert new, "no slot was filled"
    assert set(new) <= keys, sorted(set(new) - keys)
    assert len([b for b in became if cited_keys(b)]) >= 1
    print(f"\nbrowser: {len([b for b in became if cited_keys(b)])} of {len(became)} slots filled "
          f"with {len(set(new))} refs.bib keys")
