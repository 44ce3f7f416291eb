"""The index behind the "keys" agent (:mod:`citefinder.retrieve.agents.keys`, which says why a key names a paper):
each paper's key cut into parts at import time (letter runs, CamelCase split: "haHyperNetworks2016" -> ha, hyper,
networks), only the parts the rest of the record does not already say kept (not an author's surname, not a word of
the title nor part of one, not a generic word), and posted under those parts. Generated keys
("vaswaniAttentionAllYou2017", "he2016deep", "Muchnick97") therefore add nothing, and hand-made ones ("lama",
"lecun1998mnist", "METIS98") add their name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from citefinder.index.base import PaperSource, load_postings, save_postings
from citefinder.library.identity import fold, surname
from citefinder.types import Paper

MIN_LENGTH = 3
# A key part shared by more papers than this names none of them.
MAX_POSTINGS = 10
KEY_RUN = re.compile(r"[A-Za-z]+")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_GENERIC = frozenset(
    "the and for with from via using towards toward deep learning neural network networks model models arxiv "
    "preprint proceedings conference journal inproceedings article misc online web page url book chapter thesis "
    "report tech techreport workshop paper survey etal".split()
)


def key_names(paper: Paper) -> frozenset[str]:
    """The parts of ``paper.key`` (lower case, accents folded) that its authors and title do not already say:
    none is a surname, a title word, or a piece of one."""
    if not paper.key:
        return frozenset()
    surnames = {surname(a) for a in paper.authors} - {""}
    title_words = {w.lower() for w in KEY_RUN.findall(paper.title)}
    names = set()
    for run in KEY_RUN.findall(paper.key):
        parts = _PART.findall(run)
        for part in parts if len(parts) > 1 else [run]:  # "haHyperNetworks": its parts, not the whole run
            word = fold(part)
            if len(word) < MIN_LENGTH or word in _GENERIC or any(word in w for w in title_words | surnames):
                continue
            names.add(word)
    return frozenset(names)


@dataclass(frozen=True)
class KeysIndex:
    """Key part -> the doc_ids whose key has it."""

    postings: dict[str, tuple[str, ...]]


class KeysIndexKind:
    """Derived index of the names the papers' citation keys add."""

    name = "keys"
    version = 1

    def build(self, library: PaperSource) -> KeysIndex:
        postings: dict[str, list[str]] = defaultdict(list)
        for paper in library.iter_papers():
            for name in key_names(paper):
                postings[name].append(paper.doc_id)
        return KeysIndex({k: tuple(v) for k, v in postings.items()})

    def save(self, index: KeysIndex, folder: Path) -> None:
        save_postings(folder, "keys.json", index.postings)

    def load(self, folder: Path) -> KeysIndex:
        return KeysIndex(load_postings(folder, "keys.json", str))


KEYS = KeysIndexKind()
