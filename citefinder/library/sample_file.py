"""The sample library's file name, and whether a stored paper came from it (what the importer reads when the
user's own file brings a sample work again; :mod:`citefinder.library.sample` holds the rest of the rule)."""

from __future__ import annotations

from citefinder.types import Paper

SAMPLE_FILE = "sample-library.bib"


def is_sample(paper: Paper) -> bool:
    """Whether ``paper`` is the sample library's (imported from its file)."""
    return paper.source == SAMPLE_FILE
