"""Close relatives among candidates, and whether a sentence tells two of them apart (issue 49 item 2).

The confidence's errors at 0.86-0.97 are almost all of one kind: the topic is right and the paper is a cousin of
the cited one -- its sequel, the method it extends, the benchmark written for it, a paper of the same authors and
year, a paper with the same name stem. When the top two candidates are such relatives, how far the first is ahead
says little; what says something is whether the sentence holds a word that only one of them has.

- :func:`relatives` ``(a, b) -> Relation``: the ways two papers are close relatives (``Relation.kinds``, empty when
  they are not): "sequel" (one's name is a version of the other's: X / X v2, GPT-2 / GPT-3), "variant" (a derived
  work whose one-word name contains the other's: BERT / ALBERT), "stem" (the two go by one name, or their names
  share a stem of 5+ letters), "mentions" (one's title or abstract writes the other's name: a method and its
  extension, a model and the benchmark written for it), "authors" (the same first author within a year, or two
  shared authors in the same year), "title" (half their title words in common), "cocited" (the caller's citation
  memory cites them together).
- :func:`telling_words` ``(sentence, a, b) -> (n_a, n_b)``: how many words of the sentence one paper has and the
  other has not. A paper's words are its title's, its names' and -- only when both have one -- its abstract's: an
  entry that gained an abstract by ``library enrich`` would otherwise be a louder cousin of one that did not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from citefinder.retrieve.query.naming import Mention, NameSet, names_of, relation, split_name
from citefinder.retrieve.query.reformulate import STOPWORDS
from citefinder.types import Paper

SEQUEL, VARIANT, STEM, MENTIONS, AUTHORS, TITLE, COCITED = (
    "sequel", "variant", "stem", "mentions", "authors", "title", "cocited")
STEM_LETTERS = 5  # two names sharing their first 5 letters share a stem ("DeepSphere", "DeepSpherePlus")
TITLE_SHARE = 0.5  # titles with half their content words in common
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
_GENERIC = frozenset("model models method methods network networks learning deep neural approach using based via "
                     "towards toward new paper work results task tasks data show use large".split())


@dataclass(frozen=True)
class Relation:
    """The ways two papers are close relatives (see the module doc); no kind: not relatives."""

    kinds: tuple[str, ...] = ()

    @property
    def related(self) -> bool:
        return bool(self.kinds)

    @property
    def by_name(self) -> bool:
        """Related through their names (a sequel, a variant, a shared stem): the name alone cannot tell them apart."""
        return any(k in (SEQUEL, VARIANT, STEM) for k in self.kinds)


def _stem(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def content_words(text: str) -> frozenset[str]:
    """The text's content words, lower case, a plural's "s" dropped; a hyphenated word also by its parts."""
    out: set[str] = set()
    for token in _WORD.findall(text or ""):
        for w in (token, *token.split("-")):
            s = _stem(w)
            if len(s) >= 3 and s not in STOPWORDS:
                out.add(s)
    return frozenset(out)


@lru_cache(maxsize=4096)
def _names(paper: Paper) -> NameSet:
    return names_of(paper)


@lru_cache(maxsize=4096)
def _title_words(paper: Paper) -> frozenset[str]:
    return content_words(paper.title or "") - _GENERIC


@lru_cache(maxsize=4096)
def _abstract_words(paper: Paper) -> frozenset[str]:
    return content_words(paper.abstract or "")


def _surname(author: str) -> str:
    author = author.strip()
    if "," in author:
        return author.split(",")[0].strip().lower()
    parts = author.split()
    return parts[-1].lower() if parts else ""


def _name_relation(a: NameSet, b: NameSet) -> str | None:
    for n in a.names:
        if " " in n.written:
            continue
        base, size, version = split_name(n.written)
        rel = relation(Mention(n.written, base, size, version), b)
        if rel in (SEQUEL, VARIANT):
            return rel
    return None


def _mentions(a: Paper, b_names: NameSet) -> bool:
    """Whether ``a``'s title or abstract writes one of ``b``'s names (3 letters or more) as a word."""
    text = f"{a.title or ''} {a.abstract or ''}"
    words = {re.sub(r"[^a-z0-9]", "", w.lower()) for t in _WORD.findall(text) for w in (t, *t.split("-"))}
    return any(len(n.key) >= 3 and n.key in words for n in b_names.names)


def relatives(a: Paper, b: Paper, *, cocited: bool = False) -> Relation:
    """The ways ``a`` and ``b`` are close relatives (see the module doc); ``cocited``: the citation memory cites
    them together (the caller knows)."""
    if a.doc_id == b.doc_id:
        return Relation()
    kinds: list[str] = []
    na, nb = _names(a), _names(b)
    rel = _name_relation(na, nb) or _name_relation(nb, na)
    if rel:
        kinds.append(rel)
    shared = na.keys & nb.keys
    stems = {k[:STEM_LETTERS] for k in na.keys if len(k) >= STEM_LETTERS} & \
        {k[:STEM_LETTERS] for k in nb.keys if len(k) >= STEM_LETTERS}
    if shared or stems:
        kinds.append(STEM)
    if _mentions(a, nb) or _mentions(b, na):
        kinds.append(MENTIONS)
    sa, sb = [_surname(x) for x in a.authors], [_surname(x) for x in b.authors]
    if sa and sb and a.year and b.year:
        gap = abs(a.year - b.year)
        if (sa[0] == sb[0] and gap <= 1) or (len(set(sa) & set(sb)) >= 2 and gap == 0):
            kinds.append(AUTHORS)
    ta, tb = _title_words(a), _title_words(b)
    if ta and tb and len(ta & tb) / min(len(ta), len(tb)) >= TITLE_SHARE and len(ta & tb) >= 2:
        kinds.append(TITLE)
    if cocited:
        kinds.append(COCITED)
    return Relation(tuple(kinds))


def paper_words(paper: Paper, *, abstract: bool) -> frozenset[str]:
    """The words a paper is known by: its title's, its names', and (``abstract``) its abstract's."""
    words = content_words(paper.title or "") | {n.key for n in _names(paper).names}
    return words | _abstract_words(paper) if abstract else words


def telling_words(sentence: str, a: Paper, b: Paper) -> tuple[int, int]:
    """(words of ``sentence`` that ``a`` has and ``b`` has not, the other way round). Abstracts count only when
    both papers have one (see the module doc)."""
    said = content_words(sentence) | {re.sub(r"[^a-z0-9]", "", w.lower()) for w in _WORD.findall(sentence or "")}
    said -= _GENERIC
    both = bool((a.abstract or "").strip()) and bool((b.abstract or "").strip())
    wa, wb = paper_words(a, abstract=both), paper_words(b, abstract=both)
    return len(said & (wa - wb)), len(said & (wb - wa))


def cousin_features(sentence: str, top: Paper, runner: Paper | None,
                    cocited: Iterable[tuple[str, str]] = ()) -> dict[str, float]:
    """The features of a top candidate against its runner-up that the confidence's adjustment reads: ``cousin`` (the
    runner-up is a close relative), ``cousin_name`` (related by name), ``tell_top`` / ``tell_runner`` (words of the
    sentence only the top / only the runner-up has, at most 2), ``cousin_untold`` (relatives the sentence does not
    tell apart: no word only the top has)."""
    if runner is None:
        return {"cousin": 0.0, "cousin_name": 0.0, "tell_top": 0.0, "tell_runner": 0.0, "cousin_untold": 0.0}
    pair = {(top.doc_id, runner.doc_id), (runner.doc_id, top.doc_id)}
    rel = relatives(top, runner, cocited=bool(pair & set(cocited)))
    ta, tb = telling_words(sentence, top, runner) if sentence else (0, 0)
    cousin = 1.0 if rel.related else 0.0
    return {"cousin": cousin, "cousin_name": 1.0 if rel.by_name else 0.0, "tell_top": float(min(2, ta)),
            "tell_runner": float(min(2, tb)), "cousin_untold": cousin * float(ta == 0)}
