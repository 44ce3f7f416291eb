"""The .bib's hygiene beside a draft: keys cited but missing, entries never cited, one work under two keys,
entries whose title, year or authors disagree with the library's (or a reference library's) record of
the same work, entries no paper of a reference library matches (possibly invented), and entries cited as a preprint
whose published version the literature holds (:func:`published_problems`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from citefinder.library.identity import first_author_surname, normalize_title
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.reference import ReferenceLibrary
    from citefinder.sources.published import PublishedVersion

MISSING, UNCITED, DUPLICATE, DISAGREES, UNKNOWN = "cited but missing", "never cited", "same work twice", \
    "disagrees", "not in the reference library"
TWICE = "key defined twice"
PUBLISHED = "published since"
CITING = (MISSING, UNCITED)  # the notes that follow what the draft cites (recomputed after each replacement)


@dataclass(frozen=True)
class BibProblem:
    """One thing to look at in the .bib; ``keys`` are the entries it is about."""

    kind: str
    keys: tuple[str, ...]
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def differences(entry: Paper, record: Paper) -> list[str]:
    """How ``entry`` and ``record`` (the same work) disagree: title, year, first author."""
    out = []
    a, b = normalize_title(entry.title), normalize_title(record.title)
    if a and b and a != b and difflib.SequenceMatcher(None, a, b).ratio() < 0.9:
        out.append(f'title "{entry.title}" vs "{record.title}"')
    if entry.year and record.year and entry.year != record.year:
        out.append(f"year {entry.year} vs {record.year}")
    sa, sb = first_author_surname(entry), first_author_surname(record)
    if sa and sb and sa != sb:
        out.append(f"first author {entry.authors[0]} vs {record.authors[0]}")
    return out


def bib_problems(
    entries: Mapping[str, Paper],
    cited: Sequence[str],
    doc_of: Mapping[str, str],
    stored: Mapping[str, Paper],
    *,
    nocite_all: bool = False,
    reference: "ReferenceLibrary | None" = None,
    reference_name: str = "",
) -> list[BibProblem]:
    """What is wrong with the .bib entries (``key -> entry``) for a draft citing ``cited`` (in text order),
    given the library papers the keys map to (``doc_of``, ``stored``) and an optional reference library."""
    problems = citing_problems(list(entries), cited, nocite_all=nocite_all)
    by_doc: dict[str, list[str]] = {}
    for key in entries:
        if key in doc_of:
            by_doc.setdefault(doc_of[key], []).append(key)
    for doc, keys in by_doc.items():
        if len(keys) > 1:
            problems.append(BibProblem(DUPLICATE, tuple(keys), f"{' and '.join(keys)} are the same work "
                                                               f"(\"{entries[keys[0]].title}\"): cite one key"))
        for key in keys:
            record = stored.get(doc)
            if record is not None and record.key != key:
                diff = differences(entries[key], record)
                if diff:
                    problems.append(BibProblem(DISAGREES, (key,), f"{key} disagrees with the library's record of "
                                                                  f"the same work: {'; '.join(diff)}"))
    if reference is not None:
        problems += _against(entries, reference, reference_name)
    return problems


def citing_problems(entry_keys: Sequence[str], cited: Sequence[str], *, nocite_all: bool = False) -> list[BibProblem]:
    """Keys cited without an entry, and entries never cited (unless ``\\nocite{*}``)."""
    problems: list[BibProblem] = []
    known = set(entry_keys)
    for key in dict.fromkeys(k for k in cited if k not in known):
        problems.append(BibProblem(MISSING, (key,), f"{key} is cited but no entry of the .bib has that key "
                                                    "(LaTeX prints [?] there)"))
    used = set(cited)
    if not nocite_all:
        never = [k for k in dict.fromkeys(entry_keys) if k not in used]
        if never:
            listed = ", ".join(never[:12]) + (" ..." if len(never) > 12 else "")
            problems.append(BibProblem(UNCITED, tuple(never), f"{len(never)} entries are never cited: {listed}"))
    return problems


def refreshed(problems: Sequence[BibProblem], entry_keys: Sequence[str], cited: Sequence[str], *,
              nocite_all: bool = False) -> list[BibProblem]:
    """``problems`` with the notes on what is cited recomputed for the keys ``cited`` now (after replacements)."""
    return citing_problems(entry_keys, cited, nocite_all=nocite_all) + [p for p in problems if p.kind not in CITING]


def defined_twice(keys: Sequence[str]) -> list[BibProblem]:
    """One note per key that two entries define (BibTeX keeps the first and warns; the second is never used)."""
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    return [BibProblem(TWICE, (key,), f"{key} is defined {n} times in the .bib: BibTeX uses the first entry and "
                                      "ignores the others; give each its own key or delete the copies")
            for key, n in seen.items() if n > 1]


def _against(entries: Mapping[str, Paper], reference: "ReferenceLibrary", name: str) -> Iterable[BibProblem]:
    unknown = []
    for key, entry in entries.items():
        known = reference.match(entry)
        if known is None:
            named = reference.named(entry)
            if named is None:
                unknown.append(key)
                continue
            known = named
        diff = differences(entry, known)
        if diff:
            yield BibProblem(DISAGREES, (key,), f"{key} disagrees with {name}'s record of the same work: "
                                                f"{'; '.join(diff)}")
    for key in unknown:
        yield BibProblem(UNKNOWN, (key,), f"{key} (\"{entries[key].title}\") matches no paper of {name}: check "
                                          "that it exists (an invented reference matches none)")


def published_problems(versions: Sequence["PublishedVersion"]) -> list[BibProblem]:
    """One note per entry cited as a preprint whose published version is known: where, with its year, pages and
    DOI (:mod:`citefinder.sources.published`; none where the record is not the same work)."""
    return [BibProblem(PUBLISHED, (v.key,), f"{v.line()}; cite the published version") for v in versions]
