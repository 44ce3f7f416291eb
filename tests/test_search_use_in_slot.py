"""*Use in slot* from the Search page (citefinder/ui/search_view.py): a paper that is not in the library the draft
was filled from (the paired .bib's own library) is refused with a plain message naming where it is missing,
instead of the raw "Cannot learn a pick of arxiv:...: not in the library"; a paper that is there goes in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from citefinder.types import Paper
from citefinder.ui import state
from citefinder.ui.search_view import not_in_run

PAPER = Paper(doc_id="arxiv:2106.07704", title="A paper the search found", key="smith2021")


class Held:
    def __init__(self, *ids: str) -> None:
        self.ids, self.path = set(ids), Path("/libs/paired")

    def get(self, ids: list[str]) -> list[Any]:
        return [PAPER for i in ids if i in self.ids]


def run(paired: bool) -> state.CiteRun:
    return state.CiteRun(text="x [CITATION].", results=(), elapsed_s=0.1, source_name="paper.tex",
                         paired=state.PairedBib("refs.bib", "/libs/paired", 3) if paired else None)


def test_a_paper_missing_from_the_paired_bib_is_refused_plainly() -> None:
    why = not_in_run(run(True), Held(), PAPER)
    assert why is not None and why.startswith("“A paper the search found” is not in refs.bib, the .bib paired")
    assert "Cannot learn" not in why and "arxiv:" not in why


def test_a_paper_missing_from_the_library_is_refused_plainly() -> None:
    why = not_in_run(run(False), Held(), PAPER)
    assert why is not None and "is not in the library /libs/paired, which the draft was filled from" in why


def test_a_paper_the_library_holds_goes_in() -> None:
    assert not_in_run(run(True), Held(PAPER.doc_id), PAPER) is None
