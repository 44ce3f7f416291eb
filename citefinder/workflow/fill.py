"""Filling a draft, once for both faces: read the draft, run the pipeline over its slots with a progress
callback, learn the cites the user already wrote, choose each slot's keys (the user's .bib keys, or the
keys of a .bib of the chosen papers made here) and make the filled text.

``citefinder fill`` (``cli/fill.py``) turns its arguments into a :class:`FillRequest`, calls these and turns
the :class:`FillOutcome` into lines and the one writer's outputs (which files, where: the CLI's plan). The
Cite page's worker (``ui/fill_job.py``) runs :func:`run_slots`, and its downloads (``ui/exports.py``) make
the .bib with :func:`bibliography_of` and the filled draft with :func:`filled_text`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from citefinder.errors import CitefinderError, InputError
from citefinder.text.fill import DEFAULT_COMMAND, fill_draft
from citefinder.types import Paper, SlotResult

log = logging.getLogger(__name__)

__all__ = ["FillOutcome", "FillRequest", "bibliography_of", "choose_keys", "draft_name", "engine_choices",
           "filled_files", "filled_text", "keys_in_bibs", "learn_written_cites", "read_draft", "run_slots"]

Progress = Callable[[int, int, "SlotResult | None"], None]
Order = Literal["cited", "file"]


@dataclass(frozen=True)
class FillRequest:
    """What to fill: the draft's text, how to read it (``latex``: True for a .tex project, None: as it looks)
    and the command a plain [CITATION] becomes."""

    text: str
    latex: bool | None = None
    command: str = DEFAULT_COMMAND


@dataclass(frozen=True)
class FillOutcome:
    """What a fill chose: the slot results, per slot the keys it is cited with (in cite order; a slot left
    out is unfilled), the slots whose chosen paper has no key in the user's .bib, and (filling from the
    library) the .bib of the chosen papers to write and how many entries it holds."""

    results: tuple[SlotResult, ...]
    slot_keys: dict[int, list[str]]
    unkeyed: tuple[int, ...] = ()
    bib: str | None = None
    entries: int = 0


def read_draft(draft: Path) -> Any:
    """The draft as a :class:`~citefinder.text.project.Project` (a PDF: its text, a project of no file); the
    caller says the project's ``missing`` files."""
    from citefinder.text.drafts import SUPPORTED, TEXT_SUFFIXES, extract_draft_text
    from citefinder.text.project import Project, Segment, SourceFile, read_project

    if draft.suffix.lower() == ".pdf":
        try:
            data = draft.read_bytes()
        except OSError as e:
            raise CitefinderError(f"Cannot read the draft {draft}: {e}") from e
        text = extract_draft_text(data, draft.name)
        source = SourceFile(draft.expanduser().resolve(), text, "utf-8")
        return Project((source,), text, (Segment(0, len(text), 0, 0),), latex=False)
    if not draft.name.lower().endswith(TEXT_SUFFIXES):
        raise InputError(f"{draft.name}: unsupported file type; upload {SUPPORTED}.")
    if not draft.is_file():
        raise CitefinderError(f"Cannot read the draft {draft}: no such file.")
    project = read_project(draft)
    if not project.text.strip():
        raise InputError(f"{draft.name} is empty.")
    return project


def draft_name(project: Any) -> str:
    """The draft's name in the memory (its citations are co-cited with each other): its resolved path, so two
    projects whose main file is ``main.tex`` are two drafts."""
    return f"draft:{project.main}"


def run_slots(pipeline: Any, request: FillRequest, progress: Progress | None = None) -> list[SlotResult]:
    """Every slot of the request's text cited by ``pipeline``, in slot order; ``progress(done, total, last)``
    after each (it may raise to stop the fill)."""
    return list(pipeline.cite_text(request.text, progress=progress, latex=request.latex))


def learn_written_cites(library: Any, project: Any, settings: Any) -> int:
    """The cites the user already wrote in a LaTeX project join the library's memory (returns how many were
    new; nothing when learning is off or the draft is not LaTeX)."""
    from citefinder.train.contexts import learn_filled_cites

    if not (project.latex and settings.learn_from_picks):
        return 0
    return learn_filled_cites(library, project, citing=draft_name(project), settings=settings)


def engine_choices(results: Sequence[SlotResult]) -> dict[int, list[Paper]]:
    """Each found slot's papers in cite order: the engine's pick, and a second paper when it proposes one."""
    return {r.slot.index: list(r.selection.papers) for r in results
            if r.slot is not None and r.selection.status == "found" and r.selection.papers}


def bibliography_of(chosen: Mapping[int, Sequence[Paper]], *, taken: Callable[[str], bool] | None = None,
                    order: Order = "cited") -> tuple[str, dict[int, list[str]], int]:
    """The .bib text of the chosen papers (each once), each slot's keys in cite order, and how many entries.

    ``order``: "cited" writes the papers in the order the draft first cites them; "file" in the order of the
    .bib they came from (file by file), then the others as cited. A paper read from the user's .bib is their
    own entry, byte for byte, with their key; the others get complete BibTeX and a key for which ``taken``
    is not true (:func:`citefinder.library.bibtex.papers_to_bibtex`)."""
    from citefinder.library.bibtex import papers_to_bibtex

    unique = list({p.doc_id: p for i in sorted(chosen) for p in chosen[i]}.values())
    if order == "file":
        cited = {p.doc_id: n for n, p in enumerate(unique)}
        unique.sort(key=lambda p: (p.position is None, p.source or "", p.position or 0, cited[p.doc_id]))
    bib, key_of = papers_to_bibtex(unique, taken=taken)
    keys = {i: list(dict.fromkeys(key_of[p.doc_id] for p in ps if p.doc_id in key_of)) for i, ps in chosen.items()}
    return bib, keys, len(unique)


def keys_in_bibs(chosen: Mapping[int, Sequence[Paper]], bib_keys: set[str] | frozenset[str], bibs: Sequence[Path],
                 library: Any) -> tuple[dict[int, list[str]], tuple[int, ...]]:
    """Each slot's chosen papers' keys in the user's .bib: a paper's stored key, or the key the .bib gives
    the same work now (a stored key that left the file while the work stayed under another key is
    followed); and the slots none of whose papers has a key (left unfilled)."""
    from citefinder.library.link import keys_by_doc

    now: dict[str, str] = {}
    for bib in bibs:
        for doc_id, linked_key in keys_by_doc(library, bib).items():
            if linked_key in bib_keys:
                now.setdefault(doc_id, linked_key)
    out: dict[int, list[str]] = {}
    unkeyed = []
    for i, papers in chosen.items():
        keys = [k for p in papers if (k := p.key if p.key and p.key in bib_keys else now.get(p.doc_id))]
        if keys:
            out[i] = list(dict.fromkeys(keys))
        else:
            unkeyed.append(i)
    return out, tuple(unkeyed)


def choose_keys(results: Sequence[SlotResult], library: Any, *, bib_keys: set[str] | None,
                bibs: Sequence[Path] = ()) -> FillOutcome:
    """The keys of the engine's picks: with the user's .bib (``bib_keys``), its keys; without, the keys of a
    .bib of the chosen papers made here (:attr:`FillOutcome.bib`), avoiding every key the library holds."""
    chosen = engine_choices(results)
    if bib_keys is not None:
        keys, unkeyed = keys_in_bibs(chosen, bib_keys, bibs, library)
        return FillOutcome(tuple(results), slot_keys=keys, unkeyed=unkeyed)
    bib, keys, entries = bibliography_of(chosen, taken=lambda k: library.by_key(k) is not None)
    return FillOutcome(tuple(results), slot_keys=keys, bib=bib, entries=entries)


def filled_files(project: Any, slots: Sequence[Any], keys: Mapping[int, Sequence[str]],
                 command: str = DEFAULT_COMMAND) -> dict[int, str]:
    """file index -> that file's text with its slots filled, for every file of the project that changed."""
    return project.fill(slots, keys, command=command)


def filled_text(text: str, results: Sequence[SlotResult], keys: Mapping[int, "str | Sequence[str]"], *,
                command: str = DEFAULT_COMMAND) -> str:
    """The draft with every slot that has a key filled: in the draft's own cite command
    (``\\citep{?}`` -> ``\\citep{key}``), a plain [CITATION] in ``command``."""
    slots = [r.slot for r in results if r.slot is not None]
    return fill_draft(text, slots, dict(keys), command=command)
