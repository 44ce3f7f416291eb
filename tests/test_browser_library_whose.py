"""The Library page says whose paper is whose (issue 37, item 9), in a real browser (`streamlit run app.py`,
Debian's Chromium): the papers table has a key column and a "yours / sample / paired with X" column; two paired
files the user named alike (both "refs.bib") are told apart; an import's "Duplicates skipped (N)" lists N
records (the sample papers the import made the user's are updated, not skipped); the editor names the file as
the user named it, never the upload's temporary name."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_browser_library_edits import pick

from app_support import build_sample_library, chromium, settle, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATEX = Path(__file__).parent / "data" / "latex"


def pair(library: Path, name: str, data: bytes) -> None:
    """A .bib paired on the Cite page, as the page keeps it (saved, and read into a library of its own)."""
    from citefinder.config import Settings
    from citefinder.library.link import link_file
    from citefinder.library.store import Library
    from citefinder.ui import paired_bib, state

    settings = Settings(library=library)
    saved = paired_bib.save_bib(settings, name, data)
    link_file(Library.open(state.paired_settings(settings, saved.parent)), saved)


def cells(grid, row: int) -> list[str]:
    """The texts of one row of a dataframe (its accessible table: the rows and columns drawn)."""
    return [c.text_content() or "" for c in grid.locator(f"tr[aria-rowindex='{row + 2}'] td").all()]


def test_whose_paper_is_whose(tmp_path) -> None:
    library = tmp_path / "library"
    shutil.copytree(build_sample_library(tmp_path.parent / "whose-sample"), library,
                    ignore=shutil.ignore_patterns("workspace", "paired"))
    bib = (LATEX / "refs.bib").read_text(encoding="utf-8")
    entries = re.findall(r"@\w+\{.*?\n\}\n", bib, flags=re.S)
    pair(library, "refs.bib", bib.encode())
    pair(library, "refs.bib", "\n".join(entries[:5]).encode())  # another file the user also called refs.bib
    first = next(e for e in entries if "Vaswani.Shazeer.ea.2017" in e)
    mine = tmp_path / "mine.bib"  # the user's .bib: papers of the sample, a new one, and one entry twice
    mine.write_text(bib + "\n" + first.replace("Vaswani.Shazeer.ea.2017", "vaswani2017again"), encoding="utf-8")

    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(f"{url}/Library")
        wait_progressing(page.get_by_text("Browse and search"))
        settle(page)
        page.locator("[data-testid='stFileUploader'] input[type='file']").first.set_input_files(str(mine))
        page.get_by_role("button", name="Import 1 file").click()
        wait_progressing(page.get_by_text("Last import"))
        settle(page)
        main = page.locator("[data-testid='stMain']")
        summary = page.locator("[data-testid='stAlert']").filter(has_text="Last import").first.inner_text()
        assert "1 duplicates skipped" in summary and "23 updated" in summary, summary
        listed = page.locator("[data-testid='stExpander']").filter(has_text="Duplicates skipped (1)")
        assert listed.locator("li").count() == 1
        assert "0-mine.bib" not in main.inner_text() and "(mine.bib)" in listed.inner_text()

        # the table: key and whose, a paper of the user's also in both paired files, told apart
        search = page.get_by_label("Search titles, authors and abstracts")
        search.fill("Attention Is All You Need")
        search.press("Enter")
        wait_progressing(page.get_by_text("best BM25 matches"))
        settle(page)
        grid = page.locator("[data-testid='stDataFrame']").filter(has_text="Attention Is All You Need").first
        wait_progressing(grid.locator("th").first, state="attached")  # the grid's header is drawn late
        heads = [h.text_content() for h in grid.locator("th").all()]
        assert heads[:3] == ["key", "title", "whose"], heads
        row = cells(grid, 0)
        assert row[0] == "Vaswani.Shazeer.ea.2017" and row[1] == "Attention Is All You Need", row
        names = re.findall(r"paired with (refs\.bib[^·]*)", row[2])
        assert row[2].startswith("yours") and len(names) == 2 and names[0].strip() != names[1].strip(), row

        # a sample paper is marked as such
        search.fill("Generative Adversarial Nets")
        search.press("Enter")
        grid = page.locator("[data-testid='stDataFrame']").filter(has_text="Generative Adversarial").first
        wait_progressing(grid)
        settle(page)
        assert cells(grid, 0)[2] == "sample", cells(grid, 0)

        # the paired files: two "refs.bib", each named apart
        labels = [next(line for line in e.inner_text().splitlines() if " · paired/" in line) for e in
                  page.locator("[data-testid='stExpander']").filter(has_text=re.compile(r" · paired/")).all()]
        assert len(labels) == 2 and all(lab.startswith("refs.bib (") for lab in labels), labels
        assert labels[0].split(" · ")[0] != labels[1].split(" · ")[0]
        assert "\\/" not in main.inner_text()  # the folder is shown as a path, not escaped

        # the editor names the user's file
        search.fill("Attention Is All You Need")
        search.press("Enter")
        settle(page)
        opener = page.get_by_text("Open and edit a paper").first
        opener.click()
        select = page.get_by_label("Paper (from the table above)")
        pick(page, select, "Attention Is All You Need (2017)", page.get_by_text(re.compile(r"^id .* · from ")),
             opener)
        said = page.get_by_text(re.compile(r"^id .* · from ")).first.inner_text()
        assert said.endswith("from mine.bib"), said
