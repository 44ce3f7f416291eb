"""Write papers as BibTeX: a paper read from the user's .bib is written as their own entry, byte for byte
(:attr:`Paper.bibtex`, with the ``@string`` definitions and crossref parent it needs); any other paper as a
complete entry made from its fields (bibtexparser v2): the user's key (else a readable generated one), its
entry type, names as "Last, First", text as BibTeX and pdflatex read it (:mod:`citefinder.library.bibtext`:
accents as BibTeX's special characters, Greek and symbols as math, a record's math and braces kept, LaTeX
specials escaped), and capitalised words that must keep their case braced.

Authors as BibTeX reads them: a list cut short ("et al.", "others") ends in ``and others``; an organisation
(a name the record braced, ``{Google Research}``, or one that names an institution, a company or a team) is one
braced name, never "Research, Google". Keys are unique ignoring case, as BibTeX compares them
(:func:`taken_test`).
"""

from __future__ import annotations

import logging
import re
from typing import Callable, Collection, Mapping, Sequence, Union

from citefinder.errors import InputError
from citefinder.library import bibentry
from citefinder.library.bibnames import STOPWORDS, ascii_letters, author_field, author_word
from citefinder.library.bibtext import escape_latex, latex_text, latex_title
from citefinder.library.identity import dedupe_keys, same_work
from citefinder.text.textsafe import clean_text
from citefinder.types import Paper

log = logging.getLogger(__name__)

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

def title_word(title: str) -> str:
    """The title's first significant word, lowercase ASCII ("" when it has none)."""
    words = [ascii_letters(w) for w in re.split(r"[\s\-/:]+", title)]
    return next((w for w in words if w and w not in STOPWORDS), "")


def bib_key_for(paper: Paper) -> str:
    """``<first author's last name><year><first significant title word>``, lowercase ASCII.

    ``vaswani2017attention``; ``anon`` without authors, ``paper`` for an author without Latin letters
    (``王小明``: no transliteration is at hand), an organisation's first word (``google2023gemini``), ``nd``
    without a year. Never only digits.
    """
    author = author_word(paper.authors[0]) if paper.authors else "anon"
    year = str(paper.year) if paper.year else "nd"
    return f"{author or 'paper'}{year}{title_word(paper.title)}"


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
            # a page range keeps its dashes as written ("1--20" is BibTeX's en dash, never "1-{}-20")
            pages = name.lower() == "pages" and re.fullmatch(r"[\w\s.,:+/\-\u2013]+", text)
            value = text.replace("\u2013", "--") if pages else escape_latex(text)
            entry.fields.append(Field(name, value))
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
    fields = [Field("title", latex_title(paper.title))]
    if paper.authors:
        fields.append(Field("author", author_field(paper.authors)))
    else:  # what BibTeX sorts and labels an entry without authors by ("to sort, need author or key")
        fields.append(Field("key", latex_text(" ".join(paper.title.split()[:4]))))
    if venue_field and paper.venue:
        fields.append(Field(venue_field, latex_text(" ".join(paper.venue.split()))))
    if paper.year:
        fields.append(Field("year", str(paper.year)))
    if paper.doi:
        fields.append(Field("doi", paper.doi))
    if paper.url:
        fields.append(Field("url", paper.url.replace("{", "%7B").replace("}", "%7D")))
    if paper.arxiv_id:
        fields += [Field("eprint", paper.arxiv_id), Field("archivePrefix", "arXiv")]
    elif entry_type == "misc" and paper.venue:
        fields.append(Field("howpublished", latex_text(" ".join(paper.venue.split()))))
    return Entry(entry_type, key, fields)


def letter_suffix(n: int) -> str:
    """1 -> "a", 26 -> "z", 27 -> "aa" ..."""
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("a") + r) + out
    return out


Taken = Union[Callable[[str], bool], Collection[str]]


def taken_test(taken: Taken | None) -> Callable[[str], bool]:
    """A test "is this key taken?" from ``taken``: a collection of keys is compared ignoring case (BibTeX reads
    ``Muller2020Ranking`` and ``muller2020ranking`` as one key); a function is asked as it is (it should ignore
    case itself: the key given and the keys it knows folded with ``str.casefold``)."""
    if taken is None:
        return lambda key: False
    if callable(taken):
        return taken
    folded = {k.casefold() for k in taken}
    return lambda key: key.casefold() in folded


def unique_key(base: str, taken: Taken | None, *, more: Sequence[str] = ()) -> str:
    """``base``, else the first of ``more`` (longer keys in the same style), else ``base`` with ``a``, ``b``, ...
    appended, that is not taken, ignoring case (:func:`taken_test`)."""
    test = taken_test(taken)
    for key in (base, *more):
        if not test(key):
            return key
    n = 0
    key = base
    while test(key):
        n += 1
        key = f"{base}{letter_suffix(n)}"
    return key


def papers_to_bibtex(
    papers: Sequence[Paper], *, taken: Taken | None = None
) -> tuple[str, dict[str, str]]:
    """BibTeX text for ``papers`` and the key given to each ``doc_id``.

    A paper with its own citation key (:attr:`Paper.key`, from the user's .bib or Zotero export)
    is written under that key; the others get a generated :func:`bib_key_for` key. A generated key
    never equals another key of this export, ignoring case, nor one ``taken`` holds (a collection: compared
    ignoring case; or a test such as the library's :meth:`~citefinder.library.store.Library.by_key`, so it
    never collides with a stored key); on collision ``a``, ``b``, ... is appended. Two different papers never
    share a key, nor keys equal but for case: a second paper bringing a key already given gets a suffix too.

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
    used: set[str] = set()  # folded: BibTeX compares keys ignoring case
    for g, key in enumerate(own):  # the users' keys first, so generated keys avoid them all
        if key and key.casefold() not in used:
            chosen[g] = key
            used.add(key.casefold())
    is_taken = taken_test(taken)
    for g, group in enumerate(groups):
        if chosen[g]:
            continue
        base = own[g] or bib_key_for(group[0])
        key = unique_key(base, lambda k, o=own[g]: k.casefold() in used or (k != o and is_taken(k)))
        if own[g]:
            log.warning("two papers carry the key %r; writing %r for %r", own[g], key, group[0].title[:60])
        chosen[g] = key
        used.add(key.casefold())

    keys: dict[str, str] = {}
    written: list[bibentry.EntryParts] = []
    for group, key in zip(groups, chosen, strict=True):
        assert key is not None  # every group got a key above
        paper = next((p for p in group if p.bibtex), group[0])
        written.append(_own(paper, key) if paper.bibtex else _generated(paper, key))
        keys.update({p.doc_id: key for p in group})
    return bibentry.join_export(written), keys


def grown_bib(held: str, name: str, added: str) -> str:
    """``held`` (a .bib's text now, kept byte for byte) with the entries of ``added`` after it. InputError when
    ``held`` is not a .bib BibTeX can read (``name`` says which file), so a damaged file is never grown."""
    import bibtexparser

    if held.strip():
        try:
            library = bibtexparser.parse_string(held, parse_stack=[])
        except RecursionError:
            library = None
        failed = library.failed_blocks if library is not None else [None]
        if failed:
            first = failed[0]
            line = getattr(first, "start_line", None)
            where = f" (line {line + 1})" if isinstance(line, int) else ""
            raise InputError(f"{name} is not a .bib BibTeX can read{where}: fix the entry there, or give "
                             "another --new-references file (nothing was written).")
    if not added.strip():
        return held
    if not held.strip():
        return added
    return held + ("" if held.endswith("\n") else "\n") + "\n" + added
