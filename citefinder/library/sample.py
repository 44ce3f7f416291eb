"""The sample library (``assets/sample-library.bib``, loaded into an empty library on the app's first run)
kept apart from the user's own papers.

A paper is a sample paper when it was imported from the file of that name (:attr:`Paper.source`): this
is stored with every paper, so it survives reopening, needs no extra file, and a paper the user's own
.bib brings again stops being a sample (the import gives it the user's entry and source). Once the
library holds papers of the user's own, the samples are left out of suggestions unless the setting
``suggest_sample`` brings them back (:func:`hidden_ids`, read by the pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from citefinder.library.sample_file import SAMPLE_FILE, is_sample

if TYPE_CHECKING:
    from citefinder.library.store import Library

__all__ = ["SAMPLE_FILE", "Counts", "counts", "hidden_ids", "is_sample", "remove_sample", "sample_ids"]


@dataclass(frozen=True)
class Counts:
    """How many papers are the user's and how many the sample's."""

    own: int
    sample: int


def sample_ids(library: "Library") -> list[str]:
    """The doc_ids of the sample papers in ``library``."""
    return library.ids_from(SAMPLE_FILE)


def counts(library: "Library") -> Counts:
    total = library.count()
    sample = len(sample_ids(library)) if total else 0
    return Counts(total - sample, sample)


def hidden_ids(library: "Library", suggest_sample: bool = False) -> frozenset[str]:
    """The papers to leave out of suggestions: the samples, once the user has papers of their own
    (none when ``suggest_sample`` or when the sample is all there is)."""
    if suggest_sample:
        return frozenset()
    ids = sample_ids(library)
    if not ids or library.count() <= len(ids):
        return frozenset()
    return frozenset(ids)


def remove_sample(library: "Library") -> int:
    """Remove every sample paper; returns how many were removed (the user's papers stay)."""
    ids = sample_ids(library)
    return library.remove(ids) if ids else 0
