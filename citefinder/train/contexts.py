"""Citation contexts from the user's own LaTeX projects, for the library's context memory.

Every ``\\cite`` of a project's .tex files becomes one record per key (the pack schema of the README):
its sentence with this cite written [CITATION] and the other cites in it [OTHER], and the cited paper as
its .bib entry describes it (title, year, authors, DOI, arXiv id). The memory matches it to the
library's papers itself, now or when they are imported later. The extraction is the one
``citefinder reranker examples-from-latex`` uses (:func:`citefinder.train.examples.latex_citations`).

A project is a folder (every .tex and .bib in it, recursively), a .zip of one, or a .tex file with
the .bib files beside it (or named).
"""

from __future__ import annotations

import logging
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import InputError
from citefinder.library.contexts.records import ContextRecord
from citefinder.text.decode import decode_text
from citefinder.train.examples import latex_citations, read_bib_entries
from citefinder.types import ImportFailure, Paper

if TYPE_CHECKING:
    from citefinder.text.project import Project

log = logging.getLogger(__name__)

MAX_ZIP_BYTES = 500 * 1024 * 1024  # a LaTeX project, unpacked; more is not one (or is a zip bomb)


def is_latex_project(path: Path) -> bool:
    """A folder holding .tex files, a .zip, or a .tex file."""
    path = Path(path)
    if path.is_dir():
        return any(path.rglob("*.tex"))
    return path.suffix.lower() in (".tex", ".zip")


def unpack_zip(path: Path, into: Path) -> Path:
    """Extract a zipped project safely (no path leaving the folder, a size cap); returns its folder."""
    try:
        with zipfile.ZipFile(path) as z:
            total = sum(i.file_size for i in z.infolist())
            if total > MAX_ZIP_BYTES:
                raise InputError(f"{path.name} unpacks to {total / 2**20:.0f} MiB; a LaTeX project is smaller "
                                 f"(at most {MAX_ZIP_BYTES // 2**20} MiB)")
            root = into.resolve()
            for info in z.infolist():
                target = (into / info.filename).resolve()
                if not target.is_relative_to(root):
                    raise InputError(f"{path.name} holds a file outside its folder ({info.filename}); not extracted")
            z.extractall(into)
    except zipfile.BadZipFile as e:
        raise InputError(f"{path.name} is not a readable .zip ({e})") from e
    return into


def latex_records(paths: Sequence[Path], bibs: Sequence[Path] = ()) -> Iterator[ContextRecord | ImportFailure]:
    """Records of every LaTeX project in ``paths`` (see the module docstring); keys without a .bib entry
    are reported once per file, never guessed."""
    with ExitStack() as stack:
        for path in map(Path, paths):
            if not path.exists():
                yield ImportFailure(str(path), "no such file or folder")
                continue
            name = path.stem if path.suffix.lower() == ".zip" else path.name
            if path.suffix.lower() == ".zip":
                path = unpack_zip(path, Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cf-latex-"))))
            if path.is_dir():
                texs = sorted(path.rglob("*.tex"))
                project_bibs = sorted(path.rglob("*.bib")) + list(bibs)
                root = path
            else:
                texs, root = [path], path.parent
                project_bibs = list(bibs) or sorted(path.parent.glob("*.bib"))
            if not texs:
                yield ImportFailure(str(path), "no .tex file in it")
                continue
            yield from _project_records(name, root, texs, project_bibs)


def _project_records(name: str, root: Path, texs: list[Path],
                     bibs: list[Path]) -> Iterator[ContextRecord | ImportFailure]:
    entries: dict[str, Paper] = {}
    broken: dict[str, str] = {}
    for bib in bibs:
        try:
            papers, bad = read_bib_entries(bib)
        except InputError as e:
            yield ImportFailure(bib.name, str(e))
            continue
        for key, paper in papers.items():
            entries.setdefault(key, paper)
        broken.update({k: v for k, v in bad.items() if k not in entries})
    citing = f"latex:{name}"
    for tex in texs:
        where = str(tex.relative_to(root)) if tex.is_relative_to(root) else tex.name
        try:
            citations = latex_citations(decode_text(tex.read_bytes()))
        except (OSError, InputError) as e:
            yield ImportFailure(where, f"could not read it: {e}")
            continue
        unresolved: dict[str, str] = {}
        for n, cite in enumerate(citations, start=1):
            for key in cite.keys:
                entry = entries.get(key)
                if entry is None:
                    unresolved.setdefault(key, broken.get(key) or "no entry in the .bib files")
                    continue
                yield ContextRecord(text=cite.focus or cite.sentence, title=entry.title, year=entry.year,
                                    authors=entry.authors, doi=entry.doi, arxiv_id=entry.arxiv_id, citing=citing,
                                    group=f"{citing}:{where}:{n}", source="latex", origin="latex",
                                    abstract=entry.abstract or None)
        if unresolved:
            shown = ", ".join(f"{k} ({why})" for k, why in list(unresolved.items())[:5])
            more = f" and {len(unresolved) - 5} more" if len(unresolved) > 5 else ""
            yield ImportFailure(where, f"{len(unresolved)} cited keys not resolved: {shown}{more}")


def latex_pack(paths: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """The user's LaTeX projects as records of the pack schema (every one ``split`` "train": the held-out part
    of a training run is split off by citing paper afterwards), the cited paper's .bib abstract included so
    that it is embedded as a library embeds it; what cannot be read is logged, never guessed."""
    for n, record in enumerate(latex_records(paths), start=1):
        if isinstance(record, ImportFailure):
            log.warning("%s: %s", record.source, record.reason)
            continue
        yield {"id": f"{record.group}:{n}", "text": record.text, "prev": record.prev, "next": record.next,
               "cited": {"title": record.title, "year": record.year, "authors": list(record.authors), "doc_id": None,
                         "doi": record.doi, "arxiv_id": record.arxiv_id, "abstract": record.abstract},
               "citing": {"paper": record.citing, "title": None, "year": None}, "group": record.group,
               "source": "latex", "license": None, "split": "train"}


def learn_filled_cites(library: Any, draft: str | Project, *, citing: str = "user", settings: Any = None) -> int:
    """Learn the citations a LaTeX draft already has (``\\cite{key}`` with a key of the library): each
    (sentence, paper) joins the memory as the user's own (``fill --bib`` on a .tex with filled cites), the
    sentence as ``check`` reads it (:func:`citefinder.check.draft.fitting_pairs`: one cite, one record).
    ``draft``: the project as read (a cite CiteFinder wrote into one of its files, noted beside that file and
    found there in the file's own text, is not the user's choice and is not learned until the user edits the
    text just before it), or a LaTeX text (none of it known as CiteFinder's).
    Returns how many were new; 0 when learning is off (setting ``learn_from_picks``)."""
    from citefinder.library.contexts.api import learn_picks
    from citefinder.text.citations import find_citations
    from citefinder.text.written import cites_written, without_written

    if not (settings or library.settings).learn_from_picks:
        return 0
    tex = draft if isinstance(draft, str) else without_written(draft, cites_written(f.path for f in draft.files))
    pairs = []
    known: dict[str, str | None] = {}
    # each cite's sentence as `check` reads it (text/citations.py), so that fill and check learn one cite once
    for cite in find_citations(tex):
        if cite.key not in known:
            paper = library.by_key(cite.key)
            known[cite.key] = paper.doc_id if paper is not None else None
        if known[cite.key]:
            pairs.append((cite.slot.focus or cite.slot.sentence, str(known[cite.key])))
    return learn_picks(library, pairs, citing=citing, source="latex-draft", settings=settings) if pairs else 0
