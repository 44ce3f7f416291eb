"""The "names" agent: the name written next to a marker, matched against the names papers introduce.

Half of the misses of the text agents are slots whose cited thing is named right before the marker
("OPT [CITATION]", "the Transformer [CITATION]") while another name in the sentence wins. At import
time every paper's names are collected (:class:`NamesIndexKind`):

- the title's prefix before a colon ("BERT: Pre-training of ..."), weight 3;
- a name the abstract introduces: "we propose/introduce/present ... X", "called/named/dubbed X", weight 2.5;
- a distinctive token of the title (an acronym, CamelCase, a name with digits: "ImageNet", "GPT-3"), weight 2;
- a parenthesised acronym in the title, weight 2.5, in the abstract, weight 1;
- the initials of a short title ("Long Short-Term Memory" -> LSTM), weight 1.5;
- the widely used names of landmark works (``citefinder/data/known_names.json``: "the Transformer"
  names "Attention Is All You Need", "MNIST" LeCun et al. 1998), weight 2.5.

Names are compared normalised (lower case, letters and digits only, a plural "s" dropped), so
"R-CNN", "RCNN" and "R-CNNs" meet.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from citefinder.retrieve.common import hits_from_scores
from citefinder.types import Hit, Paper, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

W_KNOWN = 2.5
W_PREFIX, W_INTRODUCED, W_TITLE_PAREN, W_TITLE_TOKEN, W_INITIALS, W_ABSTRACT_PAREN = 3.0, 2.5, 2.5, 2.0, 1.5, 1.0
_STOP = frozenset("a an the of for and in on to with from by via at as is are towards toward using its".split())
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\+*")
_PAREN = re.compile(r"\(([A-Za-z][A-Za-z0-9+\-]{1,15}s?)\)")
_INTRO = re.compile(
    r"\b(?:we|this paper|this work|here we)\s+(?:propose|introduce|present|develop|call|name|describe|release|"
    r"design)s?d?\b([^.;:]{0,80})",
    re.IGNORECASE,
)
_CALLED = re.compile(r"\b(?:called|named|dubbed|termed|coined)\s+([^.;:,]{1,40})", re.IGNORECASE)


def normalize_name(name: str) -> str:
    """Lower case, letters and digits only, a plural "s" of a longer name dropped."""
    key = re.sub(r"[^a-z0-9+]", "", name.lower()).replace("+", "plus")
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        key = key[:-1]
    return key


@lru_cache(maxsize=1)
def known_names() -> dict[str, tuple[str, ...]]:
    """Normalised title -> the names a landmark work goes by (static package data)."""
    from citefinder.library.dedupe import normalize_title

    raw = json.loads(resources.files("citefinder.data").joinpath("known_names.json").read_text(encoding="utf-8"))
    return {normalize_title(title): tuple(names) for title, names in raw["names"].items()}


@lru_cache(maxsize=1)
def known_name_keys() -> frozenset[str]:
    """Every normalised known name (the query side looks lowercase phrases up here)."""
    return frozenset(normalize_name(n) for names in known_names().values() for n in names)


def _distinctive(token: str) -> bool:
    """A name rather than a title-cased word: an acronym or CamelCase part ("R-CNN", "ImageNet") or
    letters with digits ("GPT-3", "word2vec"); "Short-Term" and "Pre-training" are not."""
    core = token.strip("+")
    if len(core) < 2:
        return False
    if any(c.isdigit() for c in core) and any(c.isalpha() for c in core):
        return True
    return any(sum(c.isupper() for c in part) >= 2 for part in core.split("-"))


def _first_name(text: str) -> str | None:
    """The first name-like token (or run of them) in a phrase: "a new network, the Transformer, ..." -> Transformer."""
    run: list[str] = []
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        capital = word[0].isupper() and word.lower() not in _STOP
        if _distinctive(word) or (capital and m.start() > 0):
            run.append(word)
        elif run:
            break
    return " ".join(run) if run else None


def _initials(title: str) -> str | None:
    words = [w for w in re.split(r"[\s\-]+", title) if w and w.lower() not in _STOP and w[0].isalpha()]
    if 2 <= len(words) <= 6:
        return "".join(w[0] for w in words)
    return None


def paper_names(paper: Paper) -> dict[str, float]:
    """Normalised name -> weight for the names ``paper`` introduces."""
    names: dict[str, float] = {}

    def add(name: str | None, weight: float) -> None:
        if not name:
            return
        key = normalize_name(name)
        if len(key) >= 2 and names.get(key, 0.0) < weight:
            names[key] = weight

    title = paper.title.strip()
    from citefinder.library.dedupe import normalize_title

    for name in known_names().get(normalize_title(title), ()):
        add(name, W_KNOWN)
    head, sep, rest = title.partition(":")
    if sep and rest.strip() and 1 <= len(head.split()) <= 4:
        add(head, W_PREFIX)
        for token in _TOKEN.findall(head):
            if _distinctive(token):
                add(token, W_TITLE_TOKEN)
    for token in _TOKEN.findall(title):
        if _distinctive(token):
            add(token, W_TITLE_TOKEN)
    for m in _PAREN.finditer(title):
        add(m.group(1), W_TITLE_PAREN)
    add(_initials(rest if sep else title), W_INITIALS)
    abstract = paper.abstract or ""
    for m in _INTRO.finditer(abstract):
        add(_first_name(m.group(1)), W_INTRODUCED)
    for m in _CALLED.finditer(abstract):
        add(_first_name(" " + m.group(1)), W_INTRODUCED)
    for m in _PAREN.finditer(abstract):
        if _distinctive(m.group(1)):
            add(m.group(1), W_ABSTRACT_PAREN)
    return names


@dataclass(frozen=True)
class NamesIndex:
    """Normalised name -> ((doc_id, weight), ...)."""

    postings: dict[str, tuple[tuple[str, float], ...]]

    def lookup(self, name: str) -> tuple[tuple[str, float], ...]:
        return self.postings.get(normalize_name(name), ())


class NamesIndexKind:
    """Derived index of the names each paper introduces."""

    name = "names"
    version = 2

    def build(self, library: "Library") -> NamesIndex:
        postings: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for paper in library.iter_papers():
            for key, weight in paper_names(paper).items():
                postings[key].append((paper.doc_id, weight))
        return NamesIndex({k: tuple(v) for k, v in postings.items()})

    def save(self, index: NamesIndex, folder: Path) -> None:
        (folder / "names.json").write_text(json.dumps({k: list(map(list, v)) for k, v in index.postings.items()}))

    def load(self, folder: Path) -> NamesIndex:
        raw = json.loads((folder / "names.json").read_text())
        return NamesIndex({k: tuple((str(d), float(w)) for d, w in v) for k, v in raw.items()})


NAMES = NamesIndexKind()
# A name shared by more papers than this says little about which one is cited ("CNN").
MAX_POSTINGS = 25


# A name match this strong (a known name, a title prefix, "we propose X") and clearly ahead of the next
# one was right 93% of the time on the training drafts (81/87); weaker or tied matches 14-65%. The two
# kinds are separate lists ("names" and "names-weak") so the fusion can trust the first much more.
STRONG = 2.5
CLEAR_LEAD = 0.7


class NamesAgent:
    """Papers introducing a name written next to the marker; the nearest name counts most.

    ``strong=True`` ("names") keeps the strong matches clearly ahead of the rest; ``strong=False``
    ("names-weak") the others.
    """

    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library", *, strong: bool = True) -> None:
        self.library = library
        self.k = settings.k_bm25
        self.strong = strong
        self.name = "names" if strong else "names-weak"

    def skip_reason(self, query: Query) -> str | None:
        return None if query.names else "no name next to the marker"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"names": list(query.names)}

    def search(self, query: Query) -> list[Hit]:
        index: NamesIndex = self.library.derived(NAMES)
        scores: dict[str, float] = {}
        for position, name in enumerate(query.names):
            postings = index.lookup(name)
            if not postings or len(postings) > MAX_POSTINGS:
                continue
            decay = 1.0 / (1.0 + position)
            specificity = 1.0 / len(postings) ** 0.5
            for doc_id, weight in postings:
                scores[doc_id] = scores.get(doc_id, 0.0) + weight * decay * specificity
        hits = hits_from_scores(scores, self.k)
        best = hits[0].score if hits else 0.0
        strong = {h.doc_id for h in hits if h.score >= STRONG and h.score >= CLEAR_LEAD * best}
        kept = [h for h in hits if (h.doc_id in strong) == self.strong]
        return [Hit(h.doc_id, r, h.score) for r, h in enumerate(kept, start=1)]
