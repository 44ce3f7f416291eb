"""The sample library (``assets/sample-library.bib``, loaded into an empty library on the app's first run)
kept apart from the user's own papers.

A paper is a sample paper when it was imported from the shipped file's bytes: the import marks it
(:mod:`citefinder.library.sample_file`: a mark in :attr:`Paper.provenance`, stored with the paper), so it
survives reopening and needs no extra file; a user's own file of the same name is the user's. A paper the
user's own file brings again stops being a sample (the import gives it the user's entry and source). Once
the library holds papers of the user's own, the samples are left out of suggestions unless the setting
``suggest_sample`` brings them back (:func:`hidden_ids`, read by the pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from citefinder.library.sample_file import MARKED, SAMPLE_FILE, is_sample, old_sample
from citefinder.library.store.manifest import read_manifest

if TYPE_CHECKING:
    from citefinder.library.store import Library

__all__ = ["SAMPLE_FILE", "Counts", "counts", "hidden_ids", "is_sample", "remove_sample", "sample_ids"]


@dataclass(frozen=True)
class Counts:
    """How many papers are the user's and how many the sample's."""

    own: int
    sample: int


def sample_ids(library: "Library") -> list[str]:
    """The doc_ids of the sample papers in ``library`` (in a library made before the papers were marked and
    not written to since, those the mark would be given: :func:`~citefinder.library.sample_file.old_sample`)."""
    marked = read_manifest(library.path).get(MARKED)
    return [p.doc_id for p in library.get(library.ids_from(SAMPLE_FILE))
            if is_sample(p) or (not marked and old_sample(p))]


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
