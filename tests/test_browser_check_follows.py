"""The Check page follows each *Replace* (issue 37, items 1 and 2): the card's word becomes "fixed: KEY", the
counts move, the button that was clicked says it is done, the .bib notes follow; one number and one word per
citation, the bands said once, the engine's evidence behind a disclosure. *Keep KEY* undoes it, and the page
follows back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app_support import build_sample_library, chromium, settle, streamlit_server, wait_progressing

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATEX = Path(__file__).parent / "data" / "latex"
NEW = "Robertson.Zaragoza.2009"
RRF = "Cormack.Clarke.Buettcher.2009"


def counts(text: str) -> dict[str, int]:
    """The summary line's counts: {"fits": 22, "doubtful": 0, "likely wrong": 2, ...}."""
    line = next(line for line in text.splitlines() if "citations" in line and "checked against" in line)
    return {w: int(n) for w, n in re.findall(r"(fits|doubtful|likely wrong|fixed) (\d+)", line)}


def test_the_page_follows_each_replace(tmp_path):
    library = build_sample_library(tmp_path / "library")
    tex = (LATEX / "checked.tex").read_text(encoding="utf-8")
    # a second wrong key: the sentence about reciprocal rank fusion cites Adam
    two = tmp_path / "two-wrong.tex"
    two.write_text(tex.replace(f"\\citep{{{RRF}}}", "\\citep{Kingma.Ba.2015}"), encoding="utf-8")
    with streamlit_server(library, tmp_path / "server.log") as url, chromium() as page:
        page.goto(f"{url}/Check")
        wait_progressing(page.get_by_role("button", name="Check citations"))
        uploads = page.locator('input[type="file"]')
        uploads.nth(0).set_input_files(str(two))
        uploads.nth(1).set_input_files(str(LATEX / "refs.bib"))
        wait_progressing(page.get_by_text("refs.bib").first)
        page.wait_for_timeout(3_000)
        page.get_by_role("button", name="Check citations").click()
        fix = page.get_by_role("button", name=f"Replace with {NEW}")
        wait_progressing(fix)
        settle(page)
        main = page.locator("[data-testid='stMain']")
        before = main.inner_text()
        assert counts(before)["likely wrong"] == 2, before
        assert "fixed" not in counts(before)
        # the bands, said once; no engine evidence outside its disclosure
        assert before.count("or more · doubtful:") == 1
        assert "cosine" not in before and "bm25 #" not in before
        assert not re.search(r"ranked \d+ of \d+|rank \d+/\d+", before)
        card = main.locator(".st-key-check_card_9")
        assert "likely wrong" in card.inner_text() and "fit 0.0" in card.inner_text()
        never = next(line for line in before.splitlines() if "never cited" in line)
        assert NEW in never and RRF in never

        fix.click()
        wait_progressing(page.get_by_text(f"Replaced by {NEW}"))
        settle(page)
        after = main.inner_text()
        assert counts(after) == {**counts(before), "likely wrong": 1, "fixed": 1}, after
        assert f"fixed: {NEW}" in card.inner_text()
        expect(page.get_by_role("button", name=f"Replaced with {NEW}")).to_be_disabled()
        expect(page.get_by_role("button", name=f"Replace with {NEW}")).to_have_count(0)
        assert all(NEW not in line for line in after.splitlines() if "never cited" in line), after
        page.screenshot(path=str(tmp_path / "after-replace.png"), full_page=True)

        # the evidence is one click away
        card.get_by_text("Evidence: how the engine ranked it").click()
        expect(card.get_by_text(re.compile(r"ranked \d+ of \d+; cosine"))).to_be_visible()

        # the other wrong key is still to fix; undoing the first brings the page back
        page.get_by_role("button", name="Keep He.Zhang.ea.2016").click()
        wait_progressing(page.get_by_role("button", name=f"Replace with {NEW}"))
        settle(page)
        assert counts(main.inner_text()) == counts(before)
        expect(page.get_by_role("button", name="Download corrected .tex")).to_be_disabled()
