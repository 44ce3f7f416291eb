"""The user's own citation-key style, read from the keys their library holds, and a new key in it.

A paper added from the literature gets a key the user would have written: ``lecun1998gradient`` beside
Google Scholar's keys, ``LeCun:1998`` or ``LeCun98`` beside hand-made ones, ``lecunGradientbasedLearningApplied1998``
beside Zotero Better BibTeX's, ``lecun-etal-1998-gradient`` beside the ACL Anthology's (``li-liang-2021-prefix``),
``LeCun1998GradientbasedLA`` beside Semantic Scholar's (``Ke2017LightGBMAH``, ``Vaswani2017AttentionIA``), and
``DBLP:conf/acl/LiL21`` beside DBLP's (:func:`dblp_key`: a new paper with no DBLP record of its own gets the key DBLP
gives its arXiv version, ``DBLP:journals/corr/abs-2106-09685``, or the key DBLP's pattern gives it at a venue DBLP
names, ``DBLP:conf/acl/LiL21``; with neither, DBLP's name part alone, ``LiL21``: never a made-up DBLP id).
An author without Latin letters (``王小明``) is ``paper`` (``Paper``) in a key, an organisation its first word
(``{Google Research}`` -> ``google``); a key is never only digits. A new key is unique ignoring case, as BibTeX
compares keys (:func:`key_in_style`). A key is cut the way
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

from citefinder.library.bibnames import is_organisation, listed_authors, organisation_word
from citefinder.library.bibtex import Taken, bib_key_for, unique_key
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
    "Laurens van der Maaten" -> "Maaten"; an organisation's first word ("{Google Research}" -> "Google"); ""
    without Latin letters."""
    from citefinder.library.identity import fold, surname

    if is_organisation(author):
        word = organisation_word(author)
        found = next((w for w in re.split(r"[\s\-/:,{}]+", author) if _ascii(w).lower() == word), word)
        return _ascii(found)
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


def _first_author(paper: Paper, *, anon: str = "anon") -> str:
    """The first author as a key writes it: ``anon`` without authors, ``paper`` without Latin letters."""
    if not paper.authors:
        return anon
    persons, _ = listed_authors(paper.authors[:1])
    return _surname_as_written(persons[0] if persons else paper.authors[0]) or "paper"


def _author(case: str) -> Part:
    def part(paper: Paper) -> str:
        name = _first_author(paper)
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


def _slug(text: str) -> str:
    """ASCII, lowercase, runs of other characters one hyphen: "van der Maaten" -> "van-der-maaten"."""
    return re.sub(r"[^a-z0-9]+", "-", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
                  ).strip("-")


def _acl_name(author: str) -> str:
    """How the ACL Anthology names an author in a key: the family name with its particles, slugged."""
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    if is_organisation(author):
        return _slug(_surname_as_written(author))
    try:
        parts = parse_single_name_into_parts(author.replace("{", "").replace("}", ""), strict=False)
        name = _slug(" ".join([*parts.von, *parts.last]))
    except Exception:  # noqa: BLE001 - an odd name: its surname as the other styles write it
        name = ""
    return name or _slug(_surname_as_written(author)) or "paper"


def _acl_words(paper: Paper) -> list[str]:
    """The title's words as the ACL Anthology slugs them (hyphenated words apart), function words left out."""
    return [w for w in _slug(paper.title.replace("{", "").replace("}", "")).split("-") if w and w not in FUNCTION_WORDS]


def _acl_who(paper: Paper) -> str:
    persons, cut = listed_authors(paper.authors)
    names = [_acl_name(a) for a in persons[:2]] or ["nn"]  # the Anthology's "no name"
    many = len(persons) > 2 or (cut and len(persons) > 0)
    return f"{names[0]}-etal" if many else "-".join(names)


def _acl(paper: Paper) -> str:
    """The ACL Anthology's keys: ``devlin-etal-2019-bert``, ``li-liang-2021-prefix`` (*Prefix-Tuning: ...*),
    ``smith-2021-word``."""
    words = _acl_words(paper)
    return "-".join(x for x in (_acl_who(paper), str(paper.year or "nd"), words[0] if words else "") if x)


def _acl_longer(paper: Paper) -> list[str]:
    """On a clash the ACL Anthology writes more of the title: ``li-etal-2021-prefix-tuning``."""
    words = _acl_words(paper)
    base = f"{_acl_who(paper)}-{paper.year or 'nd'}"
    return [f"{base}-{'-'.join(words[:n])}" for n in range(2, min(len(words), 4) + 1)]


def _s2(paper: Paper) -> str:
    """Semantic Scholar's keys: the first author's surname (capital first), the year, the title's first word as
    written and the first letters of the next two, capitalised, function words included: ``Ke2017LightGBMAH``
    (*LightGBM: A Highly Efficient ...*), ``Hochreiter1997LongSM`` (*Long Short-Term Memory*)."""
    name = _first_author(paper, anon="Anon")
    words = [w for w in (_ascii(t) for t in paper.title.replace("{", "").replace("}", "").split()) if w]
    title = (words[0] + "".join(w[:1].upper() for w in words[1:3])) if words else ""
    return f"{name[:1].upper()}{name[1:]}{paper.year or ''}{title}"


# DBLP's names of venues (its keys' middle part), by a word the venue's name holds.
_DBLP_VENUES = {
    **{w: f"conf/{w}" for w in "acl emnlp naacl eacl coling conll lrec icml iclr cvpr iccv eccv aaai ijcai sigir kdd "
       "www wsdm cikm ecir recsys interspeech icassp chi uist cscw sigmod vldb icde aistats uai colt corl".split()},
    "neurips": "conf/nips", "nips": "conf/nips", "neural information processing systems": "conf/nips",
    "association for computational linguistics": "conf/acl", "empirical methods": "conf/emnlp",
    "international conference on machine learning": "conf/icml", "learning representations": "conf/iclr",
    "tacl": "journals/tacl", "transactions of the association for computational linguistics": "journals/tacl",
    "jmlr": "journals/jmlr", "journal of machine learning research": "journals/jmlr", "tmlr": "journals/tmlr",
    "tpami": "journals/pami", "pattern analysis and machine intelligence": "journals/pami",
    "nature": "journals/nature", "computational linguistics": "journals/coling", "neural computation": "journals/neco",
    "jair": "journals/jair", "artificial intelligence research": "journals/jair",
}
_PREPRINT = re.compile(r"\b(?:arxiv|corr|preprint)\b", re.IGNORECASE)


def _dblp_venue(venue: str | None) -> str | None:
    if not venue or _PREPRINT.search(venue):
        return None
    text = " ".join(re.findall(r"[a-z]+", venue.lower()))
    for name in sorted(_DBLP_VENUES, key=len, reverse=True):  # the longest name first: "computational linguistics"
        if re.search(rf"\b{re.escape(name)}\b", text):
            return _DBLP_VENUES[name]
    return None


def _dblp_tail(paper: Paper) -> str:
    """DBLP's name part: the first author's surname, the initial of each other author's, the year's last two
    digits: ``LiL21``, ``DevlinCLT19``."""
    persons, _ = listed_authors(paper.authors)
    names = [_surname_as_written(a) for a in persons] or ["Anon"]
    first = names[0] or "Paper"
    initials = "".join(n[:1].upper() for n in names[1:11] if n)
    return f"{first[:1].upper()}{first[1:]}{initials}{str(paper.year)[-2:] if paper.year else ''}"


def dblp_key(paper: Paper) -> str:
    """DBLP's key: ``DBLP:conf/acl/LiL21`` for a paper at a venue DBLP names (DBLP's pattern; DBLP's own record
    may add a letter), else ``DBLP:journals/corr/abs-2106-09685`` for an arXiv paper (the key DBLP gives its
    arXiv version), else DBLP's name part alone (``LiL21``): a key that says ``DBLP:`` is never made up."""
    venue = _dblp_venue(paper.venue)
    if venue:
        return f"DBLP:{venue}/{_dblp_tail(paper)}"
    from citefinder.library.identity import normalize_arxiv_id

    aid = normalize_arxiv_id(paper.arxiv_id) if paper.arxiv_id else None
    if aid:
        return "DBLP:journals/corr/abs-" + re.sub(r"[./]", "-", re.sub(r"v\d+$", "", aid))
    return _dblp_tail(paper)


@dataclass(frozen=True)
class KeyStyle:
    """One way of writing keys: ``name`` says it as an example, ``make`` writes a paper's key; ``fits`` (when
    given) tells a key of the style where ``make`` cannot write it exactly (DBLP's venue part); ``longer``: the
    keys to try, in order, before a letter is appended on a clash (the ACL Anthology's more title words)."""

    name: str
    make: Callable[[Paper], str]
    fits: Callable[[Paper], bool] | None = None
    longer: Callable[[Paper], list[str]] | None = None

    def key(self, paper: Paper) -> str:
        key = self.make(paper)
        return key if key and not key.isdigit() else bib_key_for(paper)

    def writes(self, paper: Paper) -> bool:
        """``paper``'s own key is one of this style."""
        return self.fits(paper) if self.fits is not None else self.key(paper) == paper.key


def _dblp_fits(paper: Paper) -> bool:
    return bool(paper.key) and str(paper.key).startswith("DBLP:")


def _joined(parts: tuple[Part, ...], sep: str) -> Callable[[Paper], str]:
    return lambda paper: sep.join(p for part in parts if (p := part(paper)))


def _styles() -> list[KeyStyle]:
    styles = [KeyStyle("lecun1998gradient (Google Scholar)", bib_key_for),
              KeyStyle("lecunGradientbasedLearningApplied1998 (Zotero Better BibTeX)",
                       _joined((_author("lower"), _title("Words3"), _year(4)), "")),
              KeyStyle("lecun-etal-1998-gradient (ACL Anthology)", _acl, longer=_acl_longer),
              KeyStyle("LeCun1998GradientbasedLA (Semantic Scholar)", _s2),
              KeyStyle("DBLP:journals/neco/LeCunBDHHHJ89 (DBLP)", dblp_key, fits=_dblp_fits)]
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
    counts = [sum(1 for p in keyed if s.writes(p)) for s in STYLES]
    best = max(range(len(STYLES)), key=lambda i: (counts[i], -i))
    if counts[best] < max(1, MIN_SHARE * len(keyed)):
        return StyleFit(DEFAULT, counts[0], len(keyed))
    return StyleFit(STYLES[best], counts[best], len(keyed))


def key_in_style(paper: Paper, style: KeyStyle, taken: Taken) -> str:
    """``paper``'s key in ``style``, never one ``taken`` holds, ignoring case (a collection of keys is compared
    ignoring case; a test ``taken(key)`` should fold case itself): on a clash the style's longer keys, then
    ``a``, ``b``, ... appended (:func:`citefinder.library.bibtex.unique_key`)."""
    base = style.key(paper)
    return unique_key(base, taken, more=style.longer(paper) if style.longer is not None else ())
