"""Check a whole draft against its .bib: every citation judged (:mod:`citefinder.check.run`), the .bib's
hygiene (:mod:`citefinder.check.bib`), and replacing a key where the user chose another."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.check.bib import BibProblem, bib_problems, defined_twice, published_problems, refreshed
from citefinder.check.model import DOUBTFUL, FITS, WRONG
from citefinder.check.run import CheckedCitation, Progress, check_citations
from citefinder.errors import InputError
from citefinder.text.citations import Citation, find_citations, replace_keys
from citefinder.text.latex import scan_latex
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from citefinder.library.reference import ReferenceLibrary
    from citefinder.library.store import Library
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.text.project import Project
    from citefinder.text.written import WrittenCites


@dataclass(frozen=True)
class CheckReport:
    """What ``citefinder check`` found: one record per cited key (text order) and the .bib's problems."""

    citations: tuple[CheckedCitation, ...]
    problems: tuple[BibProblem, ...]
    bibs: tuple[str, ...] = ()
    library_size: int = 0
    reference: str = ""
    elapsed_s: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    key_docs: dict[str, str] = field(default_factory=dict)  # each .bib key -> the library paper it is
    entry_keys: tuple[str, ...] = ()  # every key the .bib defines (once each)
    nocited: tuple[str, ...] = ()  # the draft's \nocite keys ("*": all)
    published: tuple[Any, ...] = ()  # PublishedVersion of each entry cited as a preprint that was published

    def problems_after(self, fixes: Mapping[int, str]) -> tuple[BibProblem, ...]:
        """The .bib's problems once the citations ``fixes`` names (index -> new key) cite their new keys."""
        if not fixes or not self.entry_keys:
            return self.problems
        cited = [fixes.get(c.index, c.key) for c in self.citations] + [k for k in self.nocited if k != "*"]
        return tuple(refreshed(self.problems, self.entry_keys, cited, nocite_all="*" in self.nocited))

    @property
    def likely_wrong(self) -> list[CheckedCitation]:
        return [c for c in self.citations if c.verdict == WRONG]

    @property
    def doubtful(self) -> list[CheckedCitation]:
        return [c for c in self.citations if c.verdict == DOUBTFUL]

    def to_dict(self) -> dict[str, Any]:
        return {"citations": [c.to_dict() for c in self.citations], "bib": [p.to_dict() for p in self.problems],
                "bibs": list(self.bibs), "library_papers": self.library_size, "reference": self.reference,
                "elapsed_s": round(self.elapsed_s, 2), "notes": list(self.notes),
                "published": [v.to_dict() for v in self.published]}


def bib_entries(bibs: Sequence[Path], keys: list[str] | None = None) -> tuple[dict[str, Paper], list[str]]:
    """Every entry of the .bib files by key (the first of a key used twice, as BibTeX does) and notes;
    ``keys`` (when given) receives every entry's key as read, the twice-defined ones twice."""
    from citefinder.library.readers import read_papers

    entries: dict[str, Paper] = {}
    notes: list[str] = []
    for bib in bibs:
        for item in read_papers(bib):
            if isinstance(item, ImportFailure):
                notes.append(f"{item.source}: {item.reason}")
            elif item.key:
                if keys is not None:
                    keys.append(item.key)
                entries.setdefault(item.key, item)
    return entries, notes


def key_docs(library: "Library", entries: Mapping[str, Paper]) -> dict[str, str]:
    """Each entry's key -> the library paper it is (or was merged into), by the library's duplicate rule."""
    out = {}
    for key, entry in entries.items():
        doc = library.match(entry)
        if doc is not None:
            out[key] = doc
    return out


def check_project(
    pipeline: "Pipeline",
    project: "Project",
    bibs: Sequence[Path],
    *,
    reference: "ReferenceLibrary | None" = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Judge every citation of ``project`` against the library of its .bib files, and the .bib's hygiene."""
    from citefinder.retrieve.agents.draft import draft_context

    t0 = time.perf_counter()
    citations = find_citations(project.text, pipeline.settings.context_sentences)
    if not citations:
        raise InputError(f"{project.main.name} cites nothing: no \\cite{{key}} (or \\citep, \\autocite ...) with a "
                         "key was found outside comments.")
    read: list[str] = []
    entries, notes = bib_entries(bibs, read)
    doc_of = key_docs(pipeline.library, entries)

    def where(pos: int) -> tuple[str, int]:  # a file by its path from the main file's: two intro.tex told apart
        path, line = project.line(pos)
        return project.name_of(path), line

    checked = check_citations(pipeline, citations, doc_of, draft=draft_context(project.text), where=where,
                              progress=progress)
    stored = {p.doc_id: p for p in pipeline.library.get(sorted(set(doc_of.values())))}
    scan = scan_latex(project.text)
    nocited = list(scan.nocited)
    # keys cited by the preamble's macros (\newcommand{\bm}{\cite{bm25}}) are cited, though not checked
    in_macros = [k for c in scan.cites if scan.body is not None and c.start < scan.body[0] for k in c.cited]
    problems = bib_problems(entries, [c.key for c in citations] + [k for k in nocited if k != "*"] + in_macros,
                            doc_of, stored,
                            nocite_all="*" in nocited, reference=reference,
                            reference_name=reference.folder.name if reference is not None else "")
    problems += defined_twice(read)
    published = published_versions(list(entries.values()), pipeline.settings, reference)
    problems += published_problems(published)
    return CheckReport(tuple(checked), tuple(problems), tuple(str(b) for b in bibs), pipeline.library.count(),
                       str(reference.folder) if reference is not None else "", time.perf_counter() - t0,
                       tuple(notes), dict(doc_of), tuple(entries), tuple(nocited), tuple(published))


def published_versions(entries: Sequence[Paper], settings: Any, reference: "ReferenceLibrary | None") -> list[Any]:
    """The published versions of the entries cited as a preprint, from the reference library (``--against``),
    else the literature setting when it is a folder (read in place; an online source is not asked unbidden)."""
    from citefinder.errors import CitefinderError
    from citefinder.sources.local import LocalLiterature
    from citefinder.sources.published import find_published, preprints
    from citefinder.sources.registry import resolve

    if not preprints(entries):
        return []
    folder = reference.folder if reference is not None else None
    spec = (getattr(settings, "literature", "") or "").strip()
    try:
        if folder is None and spec and (named := resolve(spec)).kind == "folder":
            folder = named.folder
        return find_published(LocalLiterature.open(folder), entries) if folder is not None else []
    except CitefinderError as e:
        log.warning("preprints not looked up: %s", e)
        return []


def parse_fixes(specs: Sequence[str]) -> dict[str, str]:
    """``["a=b", "#7=c"]`` -> ``{"a": "b", "#7": "c"}``: replace key ``a`` everywhere, or only citation 7 (its
    number in the check's table, from 1); InputError for anything else."""
    out: dict[str, str] = {}
    for spec in specs:
        old, sep, new = (part.strip() for part in spec.partition("="))
        bad_number = old.startswith("#") and not old[1:].isdigit()
        spaced = any(c.isspace() or c in ",{}%" for c in old + new)
        if not sep or not old or not new or spaced or bad_number:
            raise InputError(f"--fix {spec!r}: write OLDKEY=NEWKEY (every citation of OLDKEY) or #N=NEWKEY "
                             "(citation N of the check's table), e.g. --fix smith2020=smith2021.")
        out[old] = new
    return out


def _chosen(citations: Sequence[Citation], fixes: Mapping[str, str]) -> dict[int, str]:
    """citation index -> its new key, for the citations ``fixes`` changes."""
    chosen: dict[int, str] = {}
    for i, c in enumerate(citations):
        new = fixes.get(f"#{i + 1}", fixes.get(c.key))
        if new is not None and new != c.key:
            chosen[i] = new
    return chosen


def fitting_pairs(project: "Project", report: CheckReport,
                  written: "WrittenCites | None" = None) -> list[tuple[str, str]]:
    """(sentence, paper) of every citation the check judged to fit, the sentence with that cite command written
    [CITATION]: what the memory learns from a checked draft. Doubtful and likely wrong ones teach nothing, nor
    does a cite CiteFinder wrote itself (``written``: :func:`citefinder.text.written.cites_written` of the
    project's files, each cite found in its own file)."""
    citations = find_citations(project.text)
    return [(_sentence(citations[c.index]), report.key_docs[c.key]) for c in report.citations
            if c.verdict == FITS and c.key in report.key_docs and c.index < len(citations)
            and not (written is not None and written.in_project(project, citations[c.index].slot.start, c.key))]


def fixed_pairs(project: "Project", fixes: Mapping[str, str], doc_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """(sentence, paper) of every citation ``fixes`` gives a new key (as :func:`fix_project` replaces them), for
    the new keys that name a library paper: the user's correction, learned."""
    citations = find_citations(project.text)
    return [(_sentence(citations[i]), doc_of[new]) for i, new in _chosen(citations, fixes).items() if new in doc_of]


def _sentence(citation: Citation) -> str:
    return citation.slot.focus or citation.slot.sentence


def fix_project(project: "Project", fixes: Mapping[str, str]) -> dict[int, str]:
    """file index -> its text with the chosen citations' keys replaced; nothing else changes. ``fixes`` maps
    a key (every citation of it) or ``#N`` (the N-th citation in text order, from 1) to the new key."""
    out = {}
    for f, items in _fixes_by_file(project, fixes).items():
        local = [c for c, _ in items]
        out[f] = replace_keys(project.files[f].text, local, {i: new for i, (_, new) in enumerate(items)})
    return out


def fix_changes(project: "Project", fixes: Mapping[str, str]) -> dict[int, list[str]]:
    """file index -> the replacements made in it (``smith2020 -> smith2021``, each once, text order): what a
    "wrote" line says of that file."""
    return {f: list(dict.fromkeys(f"{c.key} -> {new}" for c, new in items))
            for f, items in _fixes_by_file(project, fixes).items()}


def _fixes_by_file(project: "Project", fixes: Mapping[str, str]) -> dict[int, list[tuple[Citation, str]]]:
    """file index -> (citation with its span in that file, new key) of each citation ``fixes`` changes."""
    citations = find_citations(project.text)
    per_file: dict[int, list[tuple[Citation, str]]] = {}
    for i, new in _chosen(citations, fixes).items():
        c = citations[i]
        f, at = project.locate(c.start)
        per_file.setdefault(f, []).append((Citation(c.key, at, at + c.end - c.start, c.slot, c.command, c.group,
                                                    c.others), new))
    return per_file
