"""Identity of papers, the one rule: normalised titles, DOIs and arXiv ids, surnames, dedupe keys,
"same work", and stable doc ids.

Two records are the same work when they share a DOI, an arXiv id or a doc id, or a normalised title
that neither their years (more than one apart) nor their first authors' surnames contradict
(:func:`same_work`). The strongest key (DOI, then arXiv id, then normalised title) also names the
paper in the library (:func:`make_doc_id`). Import dedupe, the store, the BibTeX writer, the authors
and keys agents and the LLM answer mapping all use these functions, so they never disagree.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

from citefinder.types import Paper

# LaTeX accent macros (\"u, \'{e}, \c{c}) and named macros (\textbf, \emph).
_LATEX_ACCENT = re.compile(r"\\[\"'`^~=.]")
_LATEX_LETTER_ACCENT = re.compile(r"\\[uvHckbdrt](?![a-zA-Z])\s*")
# Letter macros ({\i}, \o, \ss, \ae) stand for letters and must not vanish with other macros.
_LATEX_LETTER = re.compile(r"\\(i|j|o|O|l|L|ss|ae|AE|oe|OE|aa|AA)(?![a-zA-Z])\s*")
_LATEX_MACRO = re.compile(r"\\[a-zA-Z]+\*?")
_NON_WORD = re.compile(r"[\W_]+")
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_ET_AL = re.compile(r"[\s,]+(?:et(?:\.\s*|\s+)al\.?|and\s+others)\s*$", re.IGNORECASE)  # "Colin Raffel et al."

_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\.org/)", re.IGNORECASE)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)

_ARXIV_PREFIX = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/|^arxiv\s*:\s*", re.IGNORECASE
)
_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(?:v\d+)?$")
# Old style: archive[.SUBJ]/YYMMNNN, e.g. hep-th/9901001 or math.GT/0309136 (the subject class
# is not part of the identifier).
_ARXIV_OLD = re.compile(r"^([a-z]+(?:-[a-z]+)?)(?:\.[a-z]{2})?/(\d{7})(?:v\d+)?$", re.IGNORECASE)


def normalize_title(title: str | None) -> str:
    """Lowercase ``title`` and strip LaTeX macros and braces, accents and punctuation.

    ``"{BERT}: Pre-training of {D}eep M{\\"u}ller"`` -> ``"bert pre training of deep muller"``.
    """
    if not title:
        return ""
    t = _LATEX_ACCENT.sub("", title)
    t = _LATEX_LETTER_ACCENT.sub("", t)
    t = _LATEX_LETTER.sub(lambda m: m.group(1), t)
    t = _LATEX_MACRO.sub(" ", t)
    t = t.replace("{", "").replace("}", "")
    if not t.isascii():  # an ASCII title has no accents to take off (most of a dump's titles)
        t = unicodedata.normalize("NFKD", t)
        t = "".join(c for c in t if not unicodedata.combining(c))
    t = _NON_WORD.sub(" ", t.casefold())
    return " ".join(t.split())


def normalize_doi(doi: str | None) -> str | None:
    """``"https://doi.org/10.1000/ABC"`` / ``"doi:10.1000/abc"`` -> ``"10.1000/abc"``; None if not a DOI."""
    if not doi:
        return None
    d = unquote(doi.strip())
    d = _DOI_PREFIX.sub("", d).strip().rstrip(".,;").lower()
    return d if _DOI_SHAPE.match(d) else None


def normalize_arxiv_id(arxiv_id: str | None) -> str | None:
    """Canonical arXiv id without prefix, URL or version, or None if it is not one.

    ``"arXiv:1706.03762v5"`` -> ``"1706.03762"``; ``"https://arxiv.org/abs/hep-th/9901001v2"`` ->
    ``"hep-th/9901001"``; ``"0801.1063"`` stays.
    """
    if not arxiv_id:
        return None
    a = _ARXIV_PREFIX.sub("", arxiv_id.strip()).strip()
    a = re.sub(r"\.pdf$", "", a, flags=re.IGNORECASE).rstrip("/")
    if m := _ARXIV_NEW.match(a):
        return m.group(1)
    if m := _ARXIV_OLD.match(a):
        return f"{m.group(1).lower()}/{m.group(2)}"
    return None


def arxiv_id_from_doi(doi: str | None) -> str | None:
    """The arXiv id behind an arXiv DOI (``10.48550/arXiv.1706.03762``), else None."""
    d = normalize_doi(doi)
    m = _ARXIV_DOI.match(d) if d else None
    return normalize_arxiv_id(m.group(1)) if m else None


def dedupe_keys(paper: Paper) -> tuple[str, ...]:
    """The keys under which ``paper`` is a duplicate of another, strongest first.

    Only keys that can be formed are returned: ``("doi:..", "arxiv:..", "title:..")``.
    """
    keys: list[str] = []
    if doi := normalize_doi(paper.doi):
        keys.append(f"doi:{doi}")
    if arxiv := normalize_arxiv_id(paper.arxiv_id):
        keys.append(f"arxiv:{arxiv}")
    if title := normalize_title(paper.title):
        keys.append(f"title:{title}")
    return tuple(keys)


def fold(name: str) -> str:
    """Lower case letters (and digits) without accents or punctuation: "Schütze" -> "schutze", "O'Neil" -> "oneil"."""
    decomposed = unicodedata.normalize("NFKD", _LATEX_LETTER.sub(lambda m: m.group(1), _LATEX_ACCENT.sub("", name)))
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c)).lower()


def _is_initials(word: str) -> bool:
    """"Y", "Y.", "JA", "J.-P." : initials written after a surname ("LeCun Y", "Smith JA")."""
    letters = word.replace(".", "").replace("-", "")
    return 0 < len(letters) <= 3 and letters.isalpha() and letters.isupper()


def surname(author: str) -> str:
    """The family name by which an author is cited, folded: its last word, particles and suffixes left out.

    "Yann LeCun", "LeCun, Yann", "LeCun, Y.", "Y. LeCun" and "LeCun Y" -> "lecun"; "Laurens van der Maaten"
    and "van der Maaten, Laurens" -> "maaten"; "Martin Luther King Jr." and "King, Jr., Martin Luther" ->
    "king"; "Colin Raffel et al." (a whole author list cut short) -> "raffel"; "王小明" -> "王小明". "" when
    there is no name.
    """
    name = _ET_AL.sub("", " ".join(author.replace("{", "").replace("}", "").split()))
    if "," in name:
        family = name.split(",", 1)[0].split()
    else:
        family = name.split()
        while len(family) > 1 and family[-1].rstrip(".").lower() in _SUFFIXES:
            family.pop()
        if len(family) > 1 and _is_initials(family[-1]) and not _is_initials(family[0]):
            family = family[:1]  # "LeCun Y": surname first, initials after
    for word in reversed(family):
        if folded := fold(word):
            return folded
    return ""


def first_author_surname(paper: Paper) -> str | None:
    """The first author's :func:`surname`, or None without authors."""
    return (surname(paper.authors[0]) or None) if paper.authors else None


class Identity(NamedTuple):
    """What tells same-titled works apart: a stored paper's doc id, year and first author's surname."""

    doc_id: str
    year: int | None
    first_author: str | None


def identity(paper: Paper) -> Identity:
    return Identity(paper.doc_id, paper.year, first_author_surname(paper))


def same_work(key: str, a: Identity | Paper | None, b: Identity | Paper) -> bool:
    """Whether two records sharing dedupe key ``key`` are one work.

    A shared DOI, arXiv id or doc id is enough; a shared title only when neither the year (more than
    one apart: a preprint and its proceedings version are often a year apart) nor the first author
    contradicts it: LeCun et al.'s "Deep learning" (Nature 2015) is not Goodfellow et al.'s "Deep
    Learning" (2016).
    """
    if a is None:
        return False
    if not key.startswith("title:"):
        return True
    ia = a if isinstance(a, Identity) else identity(a)
    ib = b if isinstance(b, Identity) else identity(b)
    if ia.year is not None and ib.year is not None and abs(ia.year - ib.year) > 1:
        return False
    return not (ia.first_author and ib.first_author and ia.first_author != ib.first_author)


# Words of titles that name a kind of text, not a work: a title made of them alone ("Introduction", "Editorial",
# "Preface to the special issue") is shared by countless works.
GENERIC_TITLE_WORDS = frozenset(
    "introduction introductions preface foreword editorial editorials conclusion conclusions overview summary "
    "abstract abstracts index contents content erratum errata correction corrections corrigendum discussion reply "
    "response commentary comment comments review reviews letter letters editor editors note notes appendix "
    "acknowledgments acknowledgements acknowledgment acknowledgement references bibliography chapter part volume "
    "special issue issues front back matter proceedings workshop keynote tutorial panel invited talk guest "
    "announcement announcements news report reports book books".split())
_TITLE_SMALL_WORDS = frozenset("a an the of for and or in on to with by from at via is are this".split())
SHORT_TITLE_WORDS = 2  # a title of this many content words or fewer names one work only with its year and author


def title_words(title: str | None) -> list[str]:
    """The content words of ``title`` (normalised; small words such as "the", "of" left out)."""
    return [w for w in normalize_title(title).split() if w not in _TITLE_SMALL_WORDS]


def generic_title(title: str | None) -> bool:
    """A title that names a kind of text rather than one work ("Introduction", "Editorial", "Preface to the
    special issue"): every content word is one of :data:`GENERIC_TITLE_WORDS` (or it has none)."""
    return all(w in GENERIC_TITLE_WORDS for w in title_words(title))


def title_doubt(a: Paper, b: Paper) -> str | None:
    """Why two records sharing a normalised title (that :func:`same_work` does not contradict) are still not
    known to be one work, or None when the title, year and first author together say they are.

    A title alone is not enough to take another record's fields: "Introduction" by Smith 2016 is not the
    authorless 2016 "Introduction" of a special issue, and an entry "Deep Learning" without year or author could
    be LeCun's review or Goodfellow's book even where only one of them is known. So a match by title is sure
    only when the title is not generic (:func:`generic_title`) and both records carry a year and a first author
    (which :func:`same_work` has then checked agree)."""
    if generic_title(a.title) or generic_title(b.title):
        return "a generic title"
    missing = [what for what, x, y in (("year", a.year, b.year), ("author", first_author_surname(a),
                                                                   first_author_surname(b))) if x is None or y is None]
    if not missing:
        return None
    short = " (a short title)" if len(title_words(a.title)) <= SHORT_TITLE_WORDS else ""
    return f"the title alone: no {' nor '.join(missing)} on one side to confirm it{short}"


def make_doc_id(paper: Paper) -> str:
    """Stable id: ``arxiv:<id>`` if the paper has an arXiv id, else ``doi:<doi>``, else
    ``t:<first 16 hex of sha1(normalised title|year|first author's surname)>`` (year and surname
    only when known)."""
    if arxiv := normalize_arxiv_id(paper.arxiv_id):
        return f"arxiv:{arxiv}"
    if doi := normalize_doi(paper.doi):
        return f"doi:{doi}"
    # year and first author are part of the hash so same-titled works of different years or by
    # different authors get different ids
    basis = normalize_title(paper.title) + (f"|{paper.year}" if paper.year else "")
    if surname := first_author_surname(paper):
        basis += f"|a:{surname}"
    digest = hashlib.sha1(basis.encode("utf-8")).hexdigest()
    return f"t:{digest[:16]}"
