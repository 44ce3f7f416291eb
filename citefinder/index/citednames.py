"""The names the literature (and the user) write next to the marker when they cite a library paper:
"VGG [CITATION]" for "Very Deep Convolutional Networks for Large-Scale Image Recognition", "Adam
[CITATION]", "word2vec [CITATION]". Built from the citation-context memory's matched records and read by
the "names" agents beside the names papers introduce themselves (:mod:`citefinder.index.names`).

A name counts for a paper by its share of the records using that name (a name written for many papers
says little), from two records on (one may be noise); the user's own sentences (picks, LaTeX) count
from one on and more, as the user names a paper the same way again. The name extractor is passed in
(the query side's own, :func:`citefinder.retrieve.query.mentions.name_mentions`), so both sides read
names alike.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citefinder.index.base import load_postings, save_postings
from citefinder.index.memory import MemoryIndexKind
from citefinder.index.names import NamesIndex, normalize_name
from citefinder.library.contexts.memory import memory_of

W_CITED, W_OWN = 2.0, 3.0  # a name every record uses for this paper: weight 2 (the literature's), 3 (the user's)
MIN_RECORDS = 2  # the literature's records naming a paper before the name counts
OWN_ORIGINS = ("user", "latex")


class CitedNamesKind(MemoryIndexKind):
    """Derived index: normalised name -> ((doc_id, weight), ...) from the memory's citing sentences."""

    name = "cited-names"
    version = 1

    def __init__(self, extract: Callable[[str], list[str]]) -> None:
        self.extract = extract  # the names next to the [CITATION] marker of a sentence, nearest first

    def build(self, library: Any) -> NamesIndex:
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        own: dict[str, Counter[str]] = defaultdict(Counter)
        for row in memory_of(library).matched_rows():
            for name in self.extract(row.text)[:1]:
                key = normalize_name(name)
                if len(key) >= 2:
                    (own if row.origin in OWN_ORIGINS else counts)[key][row.doc_id] += 1
        postings: dict[str, dict[str, float]] = defaultdict(dict)
        for table, weight, least in ((counts, W_CITED, MIN_RECORDS), (own, W_OWN, 1)):
            for key, docs in table.items():
                total = sum(docs.values())
                for doc, n in docs.items():
                    if n >= least:
                        postings[key][doc] = max(postings[key].get(doc, 0.0), round(weight * n / total, 4))
        return NamesIndex({k: tuple(sorted(v.items())) for k, v in postings.items()})

    def save(self, index: NamesIndex, folder: Path) -> None:
        save_postings(folder, "names.json", index.postings)

    def load(self, folder: Path) -> NamesIndex:
        return NamesIndex(load_postings(folder, "names.json", lambda r: (str(r[0]), float(r[1]))))
