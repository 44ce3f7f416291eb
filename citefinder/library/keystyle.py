"""The user's own citation-key style, read from the keys their library holds, and a new key in it.

A paper added from the literature gets a key the user would have written: ``lecun1998gradient`` beside
Google Scholar's keys, ``LeCun:1998`` or ``LeCun98`` beside hand-made ones, ``lecunGradientbasedLearningApplied1998``
beside Zotero Better BibTeX's, ``lecun-etal-1998-gradient`` beside the ACL Anthology's, ``LeCun1998GradientbasedLA``
beside Semantic Scholar's (``Ke2017LightGBMAH``, ``Vaswani2017AttentionIA``). A key is cut the way
the keys agent cuts it (:mod:`citefinder.index.keys`): the first author's surname, the year, words of the title;
each :class:`KeyStyle` is one way of putting them together, and the style of a library is the one that writes
most of its keys exactly as they are (at least :data:`MIN_SHARE` of them; else Google Scholar's, which
:func:`citefinder.library.bibtex.bib_key_for` writes).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from citefinder.library.bibtex import bib_key_for, letter_suffix
from citefinder.types import Paper

MIN_SHARE = 0.3  # a style must write at least this share of the user's keys exactly
# Better BibTeX's function words, left out of its short titles (and of the first title word elsewhere).
FUNCTION_WORDS = frozenset(
    "a ab aboard about above across after against al along amid among an and anti around as at before behind below "
    "beneath beside besides between beyond but by d da das de del dell dello dei degli della delle dem den der des "
    "despite die do down du during ein eine einem einen einer eines el en et except for from gli i il in inside into "
    "is it l la las le les like lo los near nor of off on onto or over past per plus round save since so some sur "
    "than the through to toward towards un una unas uno unos under underneath une unlike until up upon versus via "
    "von while with within without yet zu zum".split())
_WORD = re.compile(r"[^\W_]+")


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if c.isascii() and c.isalnum())


def _surname_as_written(author: str) -> str:
    """The family name as the author list writes it, in ASCII: "Yann LeCun" / "LeCun, Yann" -> "LeCun";
    "Laurens van der Maaten" -> "Maaten"."""
    from citefinder.library.identity import fold, surname

    folded = surname(author)
    for word in reversed(re.split(r"[\s,]+", author.replace("{", "").replace("}", ""))):
        if fold(word) == folded and folded:
            return _ascii(word)
    return _ascii(folded)


def _title_words(paper: Paper) -> list[str]:
    """The title's words (ASCII), function words left out."""
    words = [_ascii(w) for w in _WORD.findall(paper.title.replace("-", "").replace("'", ""))]
    return [w for w in words if w and w.lower() not in FUNCTION_WORDS]


Part = Callable[[Paper], str]


def _author(case: str) -> Part:
    def part(paper: Paper) -> str:
        name = _surname_as_written(paper.authors[0]) if paper.authors else "anon"
        return name.lower() if case == "lower" else name[:1].upper() + name[1:] if case == "capital" else name
    return part


def _year(digits: int) -> Part:
    return lambda paper: (str(paper.year)[-digits:] if paper.year else "nd")


def _title(kind: str) -> Part:
    def part(paper: Paper) -> str:
        words = _title_words(paper)
        if kind == "word":
            return words[0].lower() if words else ""
        if kind == "Word":
            return words[0][:1].upper() + words[0][1:].lower() if words else ""
        return "".join(w[:1].upper() + w[1:].lower() for w in words[:3])  # Better BibTeX's shorttitle3_3
    return part


def _acl(paper: Paper) -> str:
    """The ACL Anthology's keys: ``devlin-etal-2019-bert``, ``smith-jones-2020-word``, ``smith-2021-word``."""
    names = [_surname_as_written(a).lower() for a in paper.authors[:3]] or ["anon"]
    who = names[0] if len(names) == 1 else f"{names[0]}-{names[1]}" if len(names) == 2 else f"{names[0]}-etal"
    words = _title_words(paper)
    return "-".join(x for x in (who, str(paper.year or "nd"), words[0].lower() if words else "") if x)


def _s2(paper: Paper) -> str:
    """Semantic Scholar's keys: the first author's surname (capital first), the year, the title's first word as
    written and the first letters of the next two, capitalised, function words included: ``Ke2017LightGBMAH``
    (*LightGBM: A Highly Efficient ...*), ``Hochreiter1997LongSM`` (*Long Short-Term Memory*)."""
    name = _surname_as_written(paper.authors[0]) if paper.authors else "Anon"
    words = [w for w in (_ascii(t) for t in paper.title.replace("{", "").replace("}", "").split()) if w]
    title = (words[0] + "".join(w[:1].upper() for w in words[1:3])) if words else ""
    return f"{name[:1].upper()}{name[1:]}{paper.year or ''}{title}"


@dataclass(frozen=True)
class KeyStyle:
    """One way of writing keys: ``name`` says it as an example, ``make`` writes a paper's key."""

    name: str
    make: Callable[[Paper], str]

    def key(self, paper: Paper) -> str:
        return self.make(paper)


def _joined(parts: tuple[Part, ...], sep: str) -> Callable[[Paper], str]:
    return lambda paper: sep.join(p for part in parts if (p := part(paper)))


def _styles() -> list[KeyStyle]:
    styles = [KeyStyle("lecun1998gradient (Google Scholar)", bib_key_for),
              KeyStyle("lecunGradientbasedLearningApplied1998 (Zotero Better BibTeX)",
                       _joined((_author("lower"), _title("Words3"), _year(4)), "")),
              KeyStyle("lecun-etal-1998-gradient (ACL Anthology)", _acl),
              KeyStyle("LeCun1998GradientbasedLA (Semantic Scholar)", _s2)]
    for case, shown in (("lower", "lecun"), ("asis", "LeCun"), ("capital", "Lecun")):
        for sep in ("", ":", "_", "-"):
            for digits in (4, 2):
                year = "1998"[-digits:]
                styles.append(KeyStyle(f"{shown}{sep}{year}", _joined((_author(case), _year(digits)), sep)))
                for kind, word in (("word", "gradient"), ("Word", "Gradient")):
                    styles.append(KeyStyle(f"{shown}{sep}{year}{sep}{word}",
                                           _joined((_author(case), _year(digits), _title(kind)), sep)))
                    styles.append(KeyStyle(f"{shown}{sep}{word}{sep}{year}",
                                           _joined((_author(case), _title(kind), _year(digits)), sep)))
    return styles


STYLES = _styles()
DEFAULT = STYLES[0]


@dataclass(frozen=True)
class StyleFit:
    """The style read from a library's keys, and how many of them it writes exactly."""

    style: KeyStyle
    matched: int
    keys: int

    @property
    def share(self) -> float:
        return self.matched / self.keys if self.keys else 0.0


def read_style(papers: Iterable[Paper]) -> StyleFit:
    """The style that writes most of the keyed ``papers``' keys exactly (ties: the earlier in :data:`STYLES`),
    or Google Scholar's when none writes :data:`MIN_SHARE` of them."""
    keyed = [p for p in papers if p.key and p.authors and p.title]
    if not keyed:
        return StyleFit(DEFAULT, 0, 0)
    counts = [sum(1 for p in keyed if s.key(p) == p.key) for s in STYLES]
    best = max(range(len(STYLES)), key=lambda i: (counts[i], -i))
    if counts[best] < max(1, MIN_SHARE * len(keyed)):
        return StyleFit(DEFAULT, counts[0], len(keyed))
    return StyleFit(STYLES[best], counts[best], len(keyed))


def key_in_style(paper: Paper, style: KeyStyle, taken: Callable[[str], bool]) -> str:
    """``paper``'s key in ``style``; ``a``, ``b``, ... appended while ``taken(key)`` (never a key in use)."""
    base = style.key(paper) or bib_key_for(paper)
    key, n = base, 0
    while taken(key):
        n += 1
        key = f"{base}{letter_suffix(n)}"
    return key
