"""The names index: the names papers introduce (read by the "names" agents and the query's name finder).

Half of the misses of the text agents are slots whose cited thing is named right before the marker
("OPT [CITATION]", "the Transformer [CITATION]") while another name in the sentence wins. At import
time every paper's names are collected (:class:`NamesIndexKind`):

- the title's prefix before a colon ("BERT: Pre-training of ..."), weight 3;
- a name the abstract introduces (:func:`introduced_names`): "we propose/introduce/present X" (right after the
  verb), "called/named/dubbed X", "X, a ..." opening a sentence, an acronym defined there, weight 2.5;
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

from citefinder.index.base import PaperSource, load_postings, save_postings
from citefinder.library.identity import normalize_title
from citefinder.types import Paper

W_KNOWN = 4.0
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


_LEAD = 8  # "we propose ... X": the name within this many words of the verb, before any preposition
_BREAK = frozenset("of than to over with for on in from by into against as versus vs".split())
_APPOSITION = re.compile(r"(?:^|[.!?]\s+)([A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\+*),\s+(?:a|an)\s")
_DEFINED = re.compile(r"([^()]{3,120})\(([A-Za-z][A-Za-z0-9+\-]{1,15})\)")


def _lead_name(text: str) -> str | None:
    """The name right after "we propose": the first distinctive token ("Sentence-BERT", "GPT-3") or a capitalised
    word set off by a comma or bracket ("the Transformer, based on ..."), within :data:`_LEAD` words and before any
    preposition ("we present two techniques to speed up BERT" introduces no name)."""
    for i, m in enumerate(_TOKEN.finditer(text)):
        word = m.group(0)
        if i >= _LEAD or word.lower() in _BREAK:
            return None
        if _distinctive(word):
            return word
        follow = text[m.end():m.end() + 2]
        if word[0].isupper() and word.lower() not in _STOP and follow[:1] in (",", "(", ":"):
            return word
    return None


def _defines(words: str, acronym: str) -> bool:
    """Whether the words before "(X)" spell the acronym X: "Long Short-Term Memory (LSTM)", "Bidirectional Encoder
    Representations from Transformers (BERT)"."""
    letters = "".join(c for c in acronym if c.isalpha()).lower()
    if len(letters) < 2 or sum(c.isupper() for c in acronym) < 2:
        return False
    parts = [w for w in re.split(r"[\s\-]+", words) if w and w[0].isalpha() and w.lower() not in _STOP]
    return any("".join(w[0].lower() for w in parts[-n:]) == letters for n in (len(letters), len(letters) - 1) if n)


def introduced_names(abstract: str) -> list[str]:
    """The names an abstract introduces, as written: "we propose / introduce / present X" (the name right after
    the verb), "called / named / dubbed X", "X, a ..." opening a sentence, an acronym defined there ("... Memory
    (LSTM)")."""
    out: list[str] = []
    for m in _INTRO.finditer(abstract):
        out.append(_lead_name(m.group(1)) or "")
    for m in _CALLED.finditer(abstract):
        out.append(_first_name(" " + m.group(1)) or "")
    for m in _APPOSITION.finditer(abstract):
        if _distinctive(m.group(1)) or (m.group(1)[0].isupper() and m.start(1) > 0 and m.group(1).lower() not in _STOP):
            out.append(m.group(1))
    for m in _DEFINED.finditer(abstract):
        if _defines(m.group(1), m.group(2)):
            out.append(m.group(2))
    return list(dict.fromkeys(n for n in out if n and len(normalize_name(n)) >= 2))


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
    for name in introduced_names(abstract):
        add(name, W_INTRODUCED)
    for m in _PAREN.finditer(abstract):
        if _distinctive(m.group(1)):
            add(m.group(1), W_ABSTRACT_PAREN)
    return names


@dataclass(frozen=True)
class NamesIndex:
    """Normalised name -> ((doc_id, weight), ...)."""

    postings: dict[str, tuple[tuple[str, float], ...]]

    def __len__(self) -> int:
        return len(self.postings)

    def lookup(self, name: str) -> tuple[tuple[str, float], ...]:
        return self.postings.get(normalize_name(name), ())


class NamesIndexKind:
    """Derived index of the names each paper introduces."""

    name = "names"
    version = 4

    def build(self, library: PaperSource) -> NamesIndex:
        postings: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for paper in library.iter_papers():
            for key, weight in paper_names(paper).items():
                postings[key].append((paper.doc_id, weight))
        return NamesIndex({k: tuple(v) for k, v in postings.items()})

    def save(self, index: NamesIndex, folder: Path) -> None:
        save_postings(folder, "names.json", index.postings)

    def load(self, folder: Path) -> NamesIndex:
        return NamesIndex(load_postings(folder, "names.json", lambda r: (str(r[0]), float(r[1]))))


NAMES = NamesIndexKind()
