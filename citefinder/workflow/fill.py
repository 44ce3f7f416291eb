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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from citefinder.errors import CitefinderError, InputError
from citefinder.text.fill import DEFAULT_COMMAND, fill_draft
from citefinder.types import Paper, SlotResult
from citefinder.workflow.keys import Keys
from citefinder.workflow.literature import LiteratureAsk

log = logging.getLogger(__name__)

__all__ = ["FillOutcome", "FillRequest", "bibliography_of", "choose_keys", "draft_name", "engine_choices",
           "filled_files", "filled_text", "keys_in_bibs", "learn_written_cites", "read_draft", "run_slots"]

Progress = Callable[[int, int, "SlotResult | None"], None]
Order = Literal["cited", "file"]


@dataclass(frozen=True)
class FillRequest:
    """What to fill. The text and how to read it (``latex``: True for a .tex project, None: as it looks) and the
    command a plain [CITATION] becomes: enough for :func:`run_slots`. The whole fill (:func:`citefinder.workflow.
    filling.fill`) reads the ``draft`` file and writes: ``bibs`` (the user's .bib files; none: those the draft
    names, else the library), ``output`` (the filled draft; None: DRAFT.cited.tex when citing a .bib),
    ``bib_out`` (the .bib of the chosen papers, filling from the library), ``in_place``, ``force``, ``json_out``
    (the results, :func:`citefinder.workflow.rows.result_rows`), ``explicit_library`` (a library was named: the
    .bib's library is not the one beside it), the literature asked for, and ``notes`` of the face on how it read
    the request (said once every output is known to be writable: a refused fill says only why)."""

    text: str = ""
    latex: bool | None = None
    command: str = DEFAULT_COMMAND
    draft: Path | None = None
    bibs: tuple[Path, ...] = ()
    output: Path | None = None
    bib_out: Path | None = None
    in_place: bool = False
    force: bool = False
    json_out: Path | None = None
    explicit_library: bool = False
    literature: LiteratureAsk = field(default_factory=LiteratureAsk)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FillOutcome:
    """What a fill chose: the slot results (literature papers under the keys they get if added), per slot the keys
    it is cited with (in cite order; a slot left out is unfilled), the slots whose chosen paper had no key in the
    user's .bib (given an entry in ``new-references.bib``), the .bib of the chosen papers and how many entries
    (filling from the library), and what the whole fill did: the project, the .bib files cited, the files
    written, the literature papers added, the draft's name in the memory and how many cites it learned."""

    results: tuple[SlotResult, ...]
    slot_keys: dict[int, list[str]]
    unkeyed: tuple[int, ...] = ()
    bib: str | None = None
    entries: int = 0
    generated: tuple[Paper, ...] = ()
    project: Any = None
    bibs: tuple[Path, ...] = ()
    written: tuple[Path, ...] = ()
    added: tuple[Paper, ...] = ()
    added_to: Mapping[int, tuple[tuple[Paper, float], ...]] = field(default_factory=dict)
    references: Path | None = None
    draft: str = ""
    learned: int = 0
    backups: tuple[tuple[Path, Path | None], ...] = ()
    added_new: int = 0
    command: str = DEFAULT_COMMAND
    library_path: Path | None = None


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
    """The draft's name in the memory (:func:`citefinder.workflow.learn.draft_identity`): its main file's name, as
    the Cite page names the same file uploaded."""
    from citefinder.workflow.learn import draft_identity

    return draft_identity(project.main.name, project.files[0].text if project.files else project.text)


def run_slots(pipeline: Any, request: FillRequest, progress: Progress | None = None) -> list[SlotResult]:
    """Every slot of the request's text cited by ``pipeline``, in slot order; ``progress(done, total, last)``
    after each (it may raise to stop the fill)."""
    return list(pipeline.cite_text(request.text, progress=progress, latex=request.latex))


def fill_slots(pipeline: Any, request: FillRequest, progress: Progress | None = None, *, name: str,
               draft: Any = None, settings: Any = None) -> tuple[list[SlotResult], int]:
    """The slots run (:func:`run_slots`) and the cites the draft already has learned under ``name`` (its
    :func:`~citefinder.workflow.learn.draft_identity`): what both faces do with a draft. Returns the results and
    how many cites were learned (-1: learning failed, logged, never a failed fill). ``draft``: the project as
    read (the cites CiteFinder wrote in it are not learned), else the request's text."""
    results = run_slots(pipeline, request, progress)
    settings = settings if settings is not None else pipeline.settings
    try:
        learned = learn_written_cites(pipeline.library, draft if draft is not None else request.text, settings,
                                      name=name)
    except Exception:  # noqa: BLE001 - learning is a bonus: the fill stands, the traceback goes to the log
        log.warning("could not learn the cites of %s", name, exc_info=True)
        learned = -1
    return results, learned


def learn_written_cites(library: Any, draft: Any, settings: Any, *, name: str | None = None) -> int:
    """The cites the user already wrote in a LaTeX draft (a project as read, or the page's text) join the
    library's memory under the draft's name (``name``, else :func:`draft_name` of the project); returns how many
    were new (nothing when learning is off or the draft is not LaTeX)."""
    from citefinder.text.slots import looks_like_latex
    from citefinder.train.contexts import learn_filled_cites

    latex = looks_like_latex(draft) if isinstance(draft, str) else draft.latex
    if not (latex and settings.learn_from_picks):
        return 0
    return learn_filled_cites(library, draft, citing=name or draft_name(draft), settings=settings)


def engine_choices(results: Sequence[SlotResult]) -> dict[int, list[Paper]]:
    """Each found slot's papers in cite order: the engine's pick, and a second paper when it proposes one."""
    return {r.slot.index: list(r.selection.papers) for r in results
            if r.slot is not None and r.selection.status == "found" and r.selection.papers}


def bibliography_of(chosen: Mapping[int, Sequence[Paper]], keys: Keys, *,
                    order: Order = "cited") -> tuple[str, dict[int, list[str]], int]:
    """The .bib text of the chosen papers (each once), each slot's keys in cite order, and how many entries.

    ``order``: "cited" writes the papers in the order the draft first cites them; "file" in the order of the
    .bib they came from (file by file), then the others as cited. Every paper is written under
    :meth:`Keys.key_of <citefinder.workflow.keys.Keys.key_of>` (the key its card shows): a paper read from the
    user's .bib is their own entry, byte for byte, with their key; the others get complete BibTeX."""
    from citefinder.library.bibtex import papers_to_bibtex

    unique = list({p.doc_id: p for i in sorted(chosen) for p in chosen[i]}.values())
    if order == "file":
        cited = {p.doc_id: n for n, p in enumerate(unique)}
        unique.sort(key=lambda p: (p.position is None, p.source or "", p.position or 0, cited[p.doc_id]))
    keyed = [p if p.key and keys.key_of(p) == p.key else replace(p, key=keys.key_of(p), bibtex=None) for p in unique]
    bib, key_of = papers_to_bibtex(keyed)
    slot_keys = {i: list(dict.fromkeys(key_of[p.doc_id] for p in ps if p.doc_id in key_of))
                 for i, ps in chosen.items()}
    return bib, slot_keys, len(unique)


def keys_in_bibs(chosen: Mapping[int, Sequence[Paper]], bib_keys: set[str] | frozenset[str], bibs: Sequence[Path],
                 library: Any) -> tuple[dict[int, list[str]], dict[int, list[Paper]]]:
    """Each slot's chosen papers' keys in the user's .bib: a paper's stored key, or the key the .bib gives
    the same work now (a stored key that left the file while the work stayed under another key is
    followed); and per slot none of whose papers has a key there, its papers."""
    from citefinder.library.link import keys_by_doc

    now: dict[str, str] = {}
    for bib in bibs:
        for doc_id, linked_key in keys_by_doc(library, bib).items():
            if linked_key in bib_keys:
                now.setdefault(doc_id, linked_key)
    out: dict[int, list[str]] = {}
    unkeyed: dict[int, list[Paper]] = {}
    for i, papers in chosen.items():
        keys = [k for p in papers if (k := p.key if p.key and p.key in bib_keys else now.get(p.doc_id))]
        if keys:
            out[i] = list(dict.fromkeys(keys))
        else:
            unkeyed[i] = list(papers)
    return out, unkeyed


def choose_keys(results: Sequence[SlotResult], keys: Keys, *, bib_keys: set[str] | frozenset[str] | None,
                bibs: Sequence[Path] = ()) -> FillOutcome:
    """The keys of the engine's picks. With the user's .bib (``bib_keys``): its keys; a chosen paper with no key
    there gets an entry as an added paper does (:attr:`FillOutcome.generated`, for ``new-references.bib``, as the
    Cite page's download gives it one). Without: the keys of a .bib of the chosen papers made here
    (:attr:`FillOutcome.bib`). Every key made comes from ``keys``."""
    chosen = engine_choices(results)
    if bib_keys is not None:
        slot_keys, unkeyed = keys_in_bibs(chosen, bib_keys, bibs, keys.library)
        generated = {p.doc_id: p if keys.key_of(p) == p.key else replace(p, key=keys.key_of(p), bibtex=None)
                     for ps in unkeyed.values() for p in ps}
        for i, ps in unkeyed.items():
            slot_keys[i] = list(dict.fromkeys(str(generated[p.doc_id].key) for p in ps))
        return FillOutcome(tuple(results), slot_keys=slot_keys, unkeyed=tuple(unkeyed),
                           generated=tuple(generated.values()))
    bib, slot_keys, entries = bibliography_of(chosen, keys)
    return FillOutcome(tuple(results), slot_keys=slot_keys, bib=bib, entries=entries)


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
