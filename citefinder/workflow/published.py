"""Preprints that were published: each .bib entry cited as a preprint whose published version a source holds
(``library enrich --bib REFS.bib``, the Check page's .bib notes), and the .bib with those entries updated under the
same keys, every other byte kept (``library enrich --bib REFS.bib --update-published``, the Check page's
download). The decisions are :mod:`citefinder.sources.published` and :mod:`citefinder.library.published`; the
text is :mod:`citefinder.library.bibfields`; the file is written only through the one writer, with a backup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.library.bibupdate import update_text
from citefinder.sources.published import Progress, PublishedVersion, find_published
from citefinder.text.decode import decode_keeping_encoding
from citefinder.types import ImportFailure, Paper

if TYPE_CHECKING:
    from citefinder.sources.base import Source
    from citefinder.text.safewrite import WritePlan


@dataclass(frozen=True)
class Preprints:
    """What ``source`` says of the preprints the .bib files cite: each one's published version, by .bib file."""

    source: str
    found: tuple[tuple[Path, PublishedVersion], ...]
    asked: int  # entries cited as a preprint

    def lines(self) -> list[str]:
        return [v.line() for _, v in self.found]

    def summary(self) -> str:
        return (f"{len(self.found)} of {self.asked} entries cited as a preprint have a published version in "
                f"{self.source}" + ("" if not self.found else
                                    " (--update-published writes them into the .bib, keeping a backup)"))

    def updates(self) -> dict[Path, dict[str, Any]]:
        out: dict[Path, dict[str, Any]] = {}
        for bib, v in self.found:
            out.setdefault(bib, {})[v.key] = v.published
        return out


def entries_of(bib: Path) -> list[Paper]:
    from citefinder.library.readers import read_papers

    return [p for p in read_papers(bib) if not isinstance(p, ImportFailure) and p.key]


def find_in_bibs(bibs: Sequence[Path], source: "Source", *, progress: Progress | None = None) -> Preprints:
    """The published versions ``source`` holds of the preprints ``bibs`` cite (the first entry of a key)."""
    from citefinder.sources.published import preprints

    found: list[tuple[Path, PublishedVersion]] = []
    asked = 0
    seen: set[str] = set()
    for bib in bibs:
        entries = []
        for e in entries_of(bib):  # the first entry of a key, as BibTeX reads it
            if e.key not in seen:
                seen.add(e.key or "")
                entries.append(e)
        asked += len(preprints(entries))
        found += [(bib, v) for v in find_published(source, entries, progress=progress)]
    return Preprints(source.name, tuple(found), asked)


def updated_bytes(data: bytes, updates: dict[str, Any]) -> tuple[bytes, list[str]]:
    """A .bib's bytes with the entries of ``updates`` (key -> Published) rewritten, every other byte kept (its
    encoding and BOM too); and the keys rewritten."""
    text, codec, bom = decode_keeping_encoding(data)
    new, keys = update_text(text, updates)
    return bom + new.encode(codec), keys


def write_published(plan: "WritePlan", preprints: Preprints) -> list[tuple[Path, list[str], Path | None]]:
    """Write each .bib with its preprints updated, in place through ``plan`` (which must let the .bib be written
    in place: ``protect(..., editable=True)``), all or nothing, a backup of each kept; (file, keys, backup)."""
    planned: list[tuple[Path, list[str]]] = []
    for bib, updates in preprints.updates().items():
        data, keys = updated_bytes(bib.read_bytes(), updates)
        if keys:
            plan.target("the updated .bib", bib, in_place=True)
            plan.put(bib, data)
            planned.append((bib, keys))
    backups = dict(plan.commit()) if planned else {}
    from citefinder.text.safewrite import resolve

    return [(bib, keys, backups.get(resolve(bib))) for bib, keys in planned]
