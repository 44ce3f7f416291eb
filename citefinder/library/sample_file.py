"""The sample library's file name, whether a stored paper came from it, and how it becomes the user's when the
user's own file brings a sample work again (what the importer reads; :mod:`citefinder.library.sample` holds the
rest of the rule)."""

from __future__ import annotations

import dataclasses

from citefinder.library import bibentry
from citefinder.types import Paper

SAMPLE_FILE = "sample-library.bib"


def is_sample(paper: Paper) -> bool:
    """Whether ``paper`` is the sample library's (imported from its file)."""
    return paper.source == SAMPLE_FILE


def sample_over(stored: Paper, duplicate: Paper) -> bool:
    """A sample paper that the user's own file brings again, under any key (the same key included): it becomes
    the user's (issue 29; :mod:`citefinder.library.sample`)."""
    return is_sample(stored) and not is_sample(duplicate)


def owned(stored: Paper, duplicate: Paper) -> Paper:
    """``stored`` adopting ``duplicate``'s key and entry; a sample paper also stops being one, even when the
    duplicate brings no entry text (a JSONL record)."""
    new = bibentry.adopted(stored, duplicate)
    if sample_over(stored, duplicate) and is_sample(new):
        new = dataclasses.replace(new, source=duplicate.source or "imported")
    return new

