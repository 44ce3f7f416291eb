"""The Check page shows what it judges (issue 29, item 4): the judged cite command is highlighted in its sentence
with the key's place named, a key the .bib defines twice is reported, and after *Replace with* the .bib notes
follow (the new key is no longer "never cited")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app_support import build_sample_library, chromium, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATEX = Path(__file__).parent / "data" / "latex"
NEW = "Robertson.Zaragoza.2009"


def test_the_judged_marker_twice_defined_keys_and_notes_after_replace(tmp_path):
    library = build_sample_library(tmp_path / "library")
    bib = (LATEX / "refs.bib").read_text(encoding="utf-8")
    first = re.search(r"@\w+\{Vaswani\.Shazeer\.ea\.2017,.*?\n\}\n", bib, flags=re.S)
    assert first is not None
    twice = tmp_path / "refs.bib"
    twice.write_text(bib + "\n" + first.group(0).replace("Attention", "Attention (copy)"), encoding="utf-8")
    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(f"{url}/Check")
        wait_progressing(page.get_by_role("button", name="Check citations"))
        uploads = page.locator('input[type="file"]')
        uploads.nth(0).set_input_files(str(LATEX / "checked.tex"))
        uploads.nth(1).set_input_files(str(twice))
        wait_progressing(page.get_by_text("refs.bib").first)
        page.wait_for_timeout(3_000)  # let the rerun each upload starts finish: a click during it is dropped
        page.get_by_role("button", name="Check citations").click()
        fix = page.get_by_role("button", name=f"Replace with {NEW}")
        wait_progressing(fix)
        main = page.locator("[data-testid='stMain']")

        mark = main.locator("strong", has_text="[He.Zhang.ea.2016]")  # the judged command, highlighted
        wait_progressing(mark.first)
        assert "BM25" in mark.first.locator("xpath=ancestor::p[1]").inner_text()  # in the sentence it judges
        assert "[CITATION]" not in main.inner_text()

        notes = main.inner_text()
        assert "Vaswani.Shazeer.ea.2017 is defined 2 times in the .bib" in notes
        never = next(line for line in notes.splitlines() if "never cited" in line)
        assert NEW in never

        fix.click()
        wait_progressing(page.get_by_text(f"Replaced by {NEW}"))
        page.wait_for_timeout(1_000)
        after = main.inner_text()
        assert all(NEW not in line for line in after.splitlines() if "never cited" in line), after
        assert "defined 2 times" in after
