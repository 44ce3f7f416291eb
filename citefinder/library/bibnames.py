"""Authors as BibTeX reads them (issue 51): persons as "Last, First", an organisation as one braced name, a list
cut short ("et al.", "others") ending in ``and others``; and what a generated key calls an author.

An organisation is an author the record braced whole (``{Google Research}``) or one that names an institution, a
company, a team or a collaboration (``Google DeepMind``, ``Gemini Team``): BibTeX would otherwise read
``Google Research`` as a person, "Research, Google". Names are written as :mod:`citefinder.library.bibtext`
writes text (accents as BibTeX's special characters: ``M{\\"u}ller, J{\\"o}rg``).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence

from citefinder.library.bibtext import latex_text
from citefinder.library.identity import surname

__all__ = ["STOPWORDS", "ascii_letters", "author_field", "author_word", "braced_name", "is_organisation",
           "listed_authors", "organisation_word"]

STOPWORDS = frozenset(
    "a an the on of in for to and or with without towards toward via from at by is are be do does can "
    "we our your how what when why which who into over under".split()
)


def ascii_letters(text: str) -> str:
    """``text``'s letters and digits, lowercase ASCII, accents dropped: "Müller" -> "muller"."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text.lower() if c in string.ascii_lowercase or c in string.digits)


_ORGANISATION = re.compile(
    r"\b(?:research|institute|institut|university|universit[yäé]|laborator(?:y|ies)|labs?|inc|corp|corporation|"
    r"company|ltd|llc|gmbh|consortium|collaboration|team|foundation|association|society|committee|council|"
    r"organi[sz]ation|initiative|centre|center|department|ministry|agency|academy|alliance|google|openai|deepmind|"
    r"microsoft|facebook|nvidia|anthropic|ibm|amazon|baidu|alibaba|tencent|huawei|salesforce|bigscience)\b",
    re.IGNORECASE)
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_AI = re.compile(r"(?<![A-Za-z])AI(?![A-Za-z])")  # "Meta AI", "Stability AI" (never "Qingyao Ai")
_ET_AL = re.compile(r"(?:^|[\s,]+)(?:et\.?\s*al\.?|and\s+others)\s*$|^others$", re.IGNORECASE)


def braced_name(author: str) -> str | None:
    """The name inside an author the record braced whole (``{Google Research}``), else None."""
    name = author.strip()
    if len(name) > 2 and name[0] == "{" and name[-1] == "}":
        depth = 0
        for i, c in enumerate(name):
            depth += 1 if c == "{" else -1 if c == "}" else 0
            if depth == 0:
                return name[1:-1].strip() if i == len(name) - 1 else None
    return None


def is_organisation(author: str) -> bool:
    """An author that is an organisation, not a person: braced whole by the record (``{Google Research}``), or
    naming an institution, a company, a team or a collaboration (``Google DeepMind``, ``The Gemini Team``,
    ``Smith & Sons``)."""
    return braced_name(author) is not None or "&" in author or bool(_ORGANISATION.search(author)
                                                                    or _AI.search(author))


def organisation_word(author: str) -> str:
    """An organisation's first significant word, lowercase ASCII: ``{Google Research}`` -> ``google``."""
    words = [ascii_letters(w) for w in re.split(r"[\s\-/:,{}]+", author)]
    return next((w for w in words if w and w not in STOPWORDS), "")


def author_word(author: str) -> str:
    """What a key calls an author, lowercase ASCII: the surname (``Müller`` -> ``muller``), an organisation's first
    word; "" when it has no Latin letters (``王小明``)."""
    return organisation_word(author) if is_organisation(author) else ascii_letters(surname(author))


def _last_first(name: str) -> str:
    """"Jacob Devlin" -> "Devlin, Jacob" (BibTeX reads "Last, First" without guessing); kept as written
    when it already has a comma or is one word."""
    from bibtexparser.middlewares.names import parse_single_name_into_parts

    if "," in name or " " not in name:
        return name
    try:
        return parse_single_name_into_parts(name, strict=False).merge_last_name_first
    except Exception:  # noqa: BLE001 - an odd name is written as it is
        return name


def _persons(name: str, cut: bool) -> list[str]:
    """One author string as persons: "Xiao Liu, Yanan Zheng" (a list the record wrote in one string, cut short
    with "et al.") is two; "Liu, Xiao" (one person, "Last, First") stays one."""
    parts = [p.strip() for p in name.split(",") if p.strip()]
    if braced_name(name) is not None or is_organisation(name) or "{" in name:
        return [name]
    if len(parts) == 3 and parts[1].rstrip(".").lower() in _SUFFIXES:
        return [name]  # "King, Jr., Martin Luther"
    if len(parts) > 2 or (cut and len(parts) == 2 and all(len(p.split()) > 1 for p in parts)):
        return parts
    return [name]


def _person(name: str) -> str:
    """One name as BibTeX reads it: "Last, First" for a person, one braced name for an organisation."""
    inner = braced_name(name)
    if inner is not None:
        return "{" + latex_text(inner) + "}"
    if is_organisation(name) or re.search(r"\band\b", name, re.IGNORECASE):
        return "{" + latex_text(name) + "}"  # never "Research, Google"; a literal " and " is no second person
    return latex_text(_last_first(name))


def author_field(authors: Sequence[str]) -> str:
    """The ``author`` field of ``authors``: persons as "Last, First", organisations braced, and ``and others``
    (BibTeX's word for "and more authors") when the list was cut short ("et al.", "others")."""
    persons, cut = listed_authors(authors)
    names = [_person(p) for p in persons]
    if cut and names:
        names.append("others")
    return " and ".join(names)


def listed_authors(authors: Sequence[str]) -> tuple[list[str], bool]:
    """The persons ``authors`` names (a list written in one string split, "et al." left out), and whether the
    list was cut short ("et al.", "others")."""
    names: list[str] = []
    cut = False
    for raw in authors:
        name = " ".join(raw.split())
        stripped = _ET_AL.sub("", name).strip(" ,")
        cut = cut or stripped != name
        if stripped:
            names += _persons(stripped, stripped != name)
    return names, cut
