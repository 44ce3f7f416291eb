"""Write papers as BibTeX: a paper read from the user's .bib is written as their own entry, byte for byte
(:attr:`Paper.bibtex`, with the ``@string`` definitions and crossref parent it needs); any other paper as a
complete entry made from its fields (bibtexparser v2): the user's key (else a readable generated one), its
entry type, names as "Last, First", escaped text.

Output is UTF-8 (use ``\\usepackage[utf8]{inputenc}`` or biber); LaTeX specials are escaped so
every generated entry parses back, and capitalised words that must keep their case are braced.
"""

from __future__ import annotations

import logging
import re
import string
import unicodedata
from typing import Callable, Mapping, Sequence

from citefinder.library import bibentry
from citefinder.library.identity import dedupe_keys, same_work, surname
from citefinder.text.textsafe import clean_text
from citefinder.types import Paper

log = logging.getLogger(__name__)

_STOPWORDS = frozenset(
    "a an the on of in for to and or with without towards toward via from at by is are be do does can "
    "we our your how what when why which who into over under".split()
)
_CONFERENCE_WORDS = re.compile(
    r"\b(?:conference|proceedings|proc\.|workshop|symposium|meeting|congress|colloquium|summit|"
    r"advances in neural information processing systems)\b",
    re.IGNORECASE,
)
_CONFERENCES = frozenset(
    "neurips nips icml iclr acl emnlp naacl eacl aacl coling conll lrec cvpr iccv eccv wacv bmvc aaai ijcai "
    "sigir kdd www wsdm cikm ecir recsys icra iros rss corl uai aistats colt interspeech icassp chi uist "
    "cscw sigmod vldb icde sigcomm nsdi osdi sosp focs stoc soda icse fse miccai ismir icdm sdm ecml pkdd "
    "mlsys acml ijcnlp ijcnn findings".split()
)
_JOURNAL_WORDS = re.compile(
    r"\b(?:journal|transactions|letters|review|reviews|magazine|annals|bulletin|quarterly)\b", re.IGNORECASE
)
_JOURNALS = frozenset(
    "jmlr tacl tpami pami tmlr nature science pnas plos cell ijcv tkde tois tnnls tip neurocomputing "
    "bioinformatics jair".split()
) | {"neural computation", "machine learning", "artificial intelligence", "computational linguistics"}
_PREPRINT = re.compile(r"\b(?:arxiv|corr|preprint|biorxiv|medrxiv|ssrn)\b", re.IGNORECASE)

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    # \{ would still count as a brace for BibTeX's brace matching; these names do not.
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIALS_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIALS))


def escape_latex(text: str) -> str:
    """Escape LaTeX specials (``& % $ # _ { } ~ ^ \\``); ``--`` is kept from becoming a dash."""
    text = _SPECIALS_RE.sub(lambda m: _LATEX_SPECIALS[m.group(0)], text)
    while "--" in text:
        text = text.replace("--", "-{}-")
    return text


def _ascii_letters(text: str) -> str:
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text.lower() if c in string.ascii_lowercase or c in string.digits)


def bib_key_for(paper: Paper) -> str:
    """``<first author's last name><year><first significant title word>``, lowercase ASCII.

    ``vaswani2017attention``; ``anon`` without authors, ``nd`` without a year.
    """
    author = _ascii_letters(surname(paper.authors[0])) if paper.authors else ""
    year = str(paper.year) if paper.year else "nd"
    words = [_ascii_letters(w) for w in re.split(r"[\s\-/:]+", paper.title)]
    word = next((w for w in words if w and w not in _STOPWORDS), "")
    return f"{author or 'anon'}{year}{word}"


def _protect_title(title: str) -> str:
    """Escape ``title`` and brace words whose capitals must survive a lower-casing style.

    Braced: words with a capital after their first letter (BERT, NeurIPS, GPT-2) anywhere, and
    capitalised words after the first in a sentence-case title (there the capital marks a name).
    Title-case titles keep their other words unbraced so the bibliography style decides.
    """
    words = title.split(" ")
    letters = [w for w in words[1:] if len(re.sub(r"\W", "", w)) > 3]
    title_case = bool(letters) and sum(w[:1].isupper() for w in letters) * 2 > len(letters)
    out = []
    for i, word in enumerate(words):
        core = re.sub(r"^\W+|\W+$", "", word)
        inner_caps = any(c.isupper() for c in core[1:])
        name_like = i > 0 and not title_case and core[:1].isupper()
        escaped = escape_latex(word)
        if core and (inner_caps or name_like):
            lead = len(word) - len(word.lstrip(string.punctuation))
            tail = len(word) - len(word.rstrip(string.punctuation))
            body = word[lead : len(word) - tail]
            escaped = f"{escape_latex(word[:lead])}{{{escape_latex(body)}}}{escape_latex(word[len(word) - tail:])}"
        out.append(escaped)
    return " ".join(out)


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


def _author_field(authors: Sequence[str]) -> str:
    names = []
    for name in authors:
        name = " ".join(name.split())
        if name.lower() in ("others", "et al.", "et al"):
            names.append("others")  # BibTeX's word for "and more authors"
        elif re.search(r"\band\b", name, re.IGNORECASE):
            names.append(f"{{{escape_latex(name)}}}")  # a literal " and " inside one name (an organisation)
        else:
            names.append(escape_latex(_last_first(name)))
    return " and ".join(names)


def _is_conference(venue: str) -> bool:
    if _CONFERENCE_WORDS.search(venue):
        return True
    tokens = {t.lower() for t in re.findall(r"[A-Za-z]+", venue)}
    return bool(tokens & _CONFERENCES)


def _is_journal(venue: str) -> bool:
    if _JOURNAL_WORDS.search(venue) or venue.strip().lower() in _JOURNALS:
        return True
    tokens = {t.lower() for t in re.findall(r"[A-Za-z]+", venue)}
    return bool(tokens & _JOURNALS)


# Entry types whose venue field is known, as a .bib or CSL-JSON record named them.
_KEPT_TYPES = {"book": "publisher", "techreport": "institution", "phdthesis": "school", "mastersthesis": "school",
               "incollection": "booktitle", "inbook": "publisher", "proceedings": "publisher",
               "manual": "organization", "unpublished": None}


def entry_type_for(paper: Paper) -> tuple[str, str | None]:
    """BibTeX entry type and the field the venue goes in (``booktitle``, ``journal`` or none)."""
    if paper.entry_type in _KEPT_TYPES:
        return paper.entry_type, _KEPT_TYPES[paper.entry_type]
    venue = (paper.venue or "").strip()
    preprint_venue = bool(venue) and bool(_PREPRINT.search(venue))
    if venue and not preprint_venue:
        if _is_conference(venue):
            return "inproceedings", "booktitle"
        if _is_journal(venue) or paper.entry_type == "article":
            return "article", "journal"
        if paper.entry_type == "inproceedings":
            return "inproceedings", "booktitle"
    return "misc", None


def _clean(paper: Paper) -> Paper:
    """``paper`` without control characters, escape sequences or bidi overrides in any text field
    (a .bib file is read by other tools and shown in terminals; libraries imported before import
    cleaning may still hold them)."""
    from dataclasses import replace

    def c(v: str | None) -> str | None:
        return clean_text(v) if isinstance(v, str) else v

    return replace(paper, title=c(paper.title) or "", authors=tuple(c(a) or "" for a in paper.authors),
                   venue=c(paper.venue), doi=c(paper.doi), url=c(paper.url), arxiv_id=c(paper.arxiv_id))


def _generated(paper: Paper, key: str) -> bibentry.EntryParts:
    """A complete entry made from the paper's fields (papers not read from a .bib)."""
    import bibtexparser

    library = bibtexparser.Library()
    library.add(_entry(paper, key))
    return bibentry.EntryParts((), bibtexparser.write_string(library).strip())


def record_entry(paper: Paper, extra: Mapping[str, object]) -> str:
    """A complete entry for a paper read from a record that is not BibTeX (CSL-JSON): its fields, plus those
    of ``extra`` (``pages``, ``volume``, ``number``, ``publisher``... as BibTeX names them) that the record
    gives; kept as :attr:`Paper.bibtex` so an export writes them too. ``extra["author"]``, when given, is
    the author field as written (names "Last, First", organisations braced)."""
    import bibtexparser
    from bibtexparser.model import Field

    entry = _entry(paper, paper.key or bib_key_for(paper))
    names = {f.key.lower() for f in entry.fields}
    for name, value in extra.items():
        text = " ".join(clean_text(str(value)).split()) if isinstance(value, (str, int, float)) else ""
        if name == "author" and text:
            entry.fields = [Field("author", text) if f.key == "author" else f for f in entry.fields]
        elif text and name.lower() not in names:
            entry.fields.append(Field(name, escape_latex(text)))
    library = bibtexparser.Library()
    library.add(entry)
    return bibtexparser.write_string(library).strip()


def _own(paper: Paper, key: str) -> bibentry.EntryParts:
    """The paper's own text (:attr:`Paper.bibtex`), under ``key`` (a different key only on a clash)."""
    assert paper.bibtex is not None
    parts = bibentry.parts(paper.bibtex)
    if bibentry.entry_key(parts.entry) != key:
        log.warning("writing %r under the key %r (its own key is taken)", paper.title[:60], key)
        parts = bibentry.EntryParts(parts.strings, bibentry.with_key(parts.entry, key), parts.parents)
    return parts


def _entry(paper: Paper, key: str):
    from bibtexparser.model import Entry, Field

    paper = _clean(paper)
    entry_type, venue_field = entry_type_for(paper)
    fields = [Field("title", _protect_title(" ".join(paper.title.split())))]
    if paper.authors:
        fields.append(Field("author", _author_field(paper.authors)))
    if venue_field and paper.venue:
        fields.append(Field(venue_field, escape_latex(" ".join(paper.venue.split()))))
    if paper.year:
        fields.append(Field("year", str(paper.year)))
    if paper.doi:
        fields.append(Field("doi", paper.doi))
    if paper.url:
        fields.append(Field("url", paper.url.replace("{", "%7B").replace("}", "%7D")))
    if paper.arxiv_id:
        fields += [Field("eprint", paper.arxiv_id), Field("archivePrefix", "arXiv")]
    elif entry_type == "misc" and paper.venue:
        fields.append(Field("howpublished", escape_latex(" ".join(paper.venue.split()))))
    return Entry(entry_type, key, fields)


def letter_suffix(n: int) -> str:
    """1 -> "a", 26 -> "z", 27 -> "aa" ..."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def papers_to_bibtex(
    papers: Sequence[Paper], *, taken: Callable[[str], bool] | None = None
) -> tuple[str, dict[str, str]]:
    """BibTeX text for ``papers`` and the key given to each ``doc_id``.

    A paper with its own citation key (:attr:`Paper.key`, from the user's .bib or Zotero export)
    is written under that key; the others get a generated :func:`bib_key_for` key. A generated key
    never equals another key of this export nor one for which ``taken(key)`` is true (pass the
    library's :meth:`~citefinder.library.store.Library.by_key` test, so it never collides with a
    stored key); on collision ``a``, ``b``, ... is appended. Two different papers never share a key:
    a second paper bringing a key already given gets a suffix too.

    The same paper given twice (same doc_id, DOI, arXiv id, or normalised title with no
    contradicting year or first author) is written once and both doc_ids map to its key.
    Entries are written in the order given (sort ``papers`` for citation or file order).
    """
    groups: list[list[Paper]] = []  # one list per distinct work, in input order
    where: dict[str, int] = {}  # doc_id or dedupe key -> group index
    for paper in papers:
        if paper.doc_id in where:
            groups[where[paper.doc_id]].append(paper)
            continue
        identities = dedupe_keys(paper)
        g = next((where[k] for k in identities if k in where and same_work(k, groups[where[k]][0], paper)), None)
        if g is None:
            g = len(groups)
            groups.append([])
        groups[g].append(paper)
        where[paper.doc_id] = g
        for k in identities:
            where.setdefault(k, g)

    own = [next((p.key for p in group if p.key), None) for group in groups]
    chosen: list[str | None] = [None] * len(groups)
    used: set[str] = set()
    for g, key in enumerate(own):  # the users' keys first, so generated keys avoid them all
        if key and key not in used:
            chosen[g] = key
            used.add(key)
    for g, group in enumerate(groups):
        if chosen[g]:
            continue
        base = own[g] or bib_key_for(group[0])
        key, n = base, 0
        while key in used or (key != own[g] and taken is not None and taken(key)):
            n += 1
            key = f"{base}{letter_suffix(n)}"
        if own[g]:
            log.warning("two papers carry the key %r; writing %r for %r", own[g], key, group[0].title[:60])
        chosen[g] = key
        used.add(key)

    keys: dict[str, str] = {}
    written: list[bibentry.EntryParts] = []
    for group, key in zip(groups, chosen, strict=True):
        assert key is not None  # every group got a key above
        paper = next((p for p in group if p.bibtex), group[0])
        written.append(_own(paper, key) if paper.bibtex else _generated(paper, key))
        keys.update({p.doc_id: key for p in group})
    return bibentry.join_export(written), keys
