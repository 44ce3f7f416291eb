"""Where ``fill`` and ``check`` write: the names of their outputs and the :class:`~citefinder.text.safewrite.WritePlan`
that protects a LaTeX project (every file it reads, every .bib it names whether used or not, every ``--bib``,
every file linked to the library, the library's folder, every folder given as an input: :data:`FOLDER_INPUTS`)
before any work is done."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from citefinder.text.project import apply_edits
from citefinder.text.safewrite import WritePlan

TEXT_SUFFIXES = (".tex", ".md", ".txt", ".markdown")
# Every option whose value is a folder of papers the command only reads (argparse dest -> what it is called in a
# refusal): nothing is ever written inside it, whatever the flags (--force included), like the library folder.
# tests/test_one_writer.py walks the CLI: a new folder option fails it until it is filed here or there.
FOLDER_INPUTS = {"literature": "the literature library", "against": "the reference library",
                 "source": "the literature library"}


def cited_name(draft: Path) -> Path:
    """``paper.tex`` -> ``paper.cited.tex`` beside it (a PDF draft's text becomes ``.cited.txt``)."""
    suffix = draft.suffix if draft.suffix.lower() in TEXT_SUFFIXES else ".txt"
    return draft.with_name(f"{draft.stem}.cited{suffix}")


def project_plan(project: Any, bibs: Iterable[Path], library_folder: Path | None, *, in_place: bool = False,
                 force: bool = False) -> WritePlan:
    """A plan that protects ``project`` (a LaTeX project's files, the ``.txt`` it ``\\input``s too, editable in
    place only with ``in_place``), ``bibs``, the .bib files the project names, the library folder and the files
    linked to it."""
    from citefinder.library.link import linked_paths

    plan = WritePlan(draft=project.main, force=force)
    for i, f in enumerate(project.files):
        editable = in_place and project.latex  # every file TeX reads: a slot in an \input .txt is filled there
        plan.protect("the draft" if i == 0 else "a file of the draft", [f.path], editable=editable)
    plan.protect("your bibliography", bibs)
    plan.protect("a .bib the draft names", getattr(project, "bibliographies", ()))
    if library_folder is not None:
        plan.protect_folder("the library folder", library_folder)
        plan.protect("a file linked to the library", linked_paths(library_folder))
    return plan


def input_folders(args: Any, settings: Any = None) -> list[tuple[str, Path]]:
    """Every folder this command reads papers from (what it is, its path): the :data:`FOLDER_INPUTS` options given,
    and the ``literature`` setting (``CITEFINDER_LITERATURE``), whether or not this run reads it. A name that is
    no folder here (an online source's: ``openalex``) is left out."""
    from citefinder.text.safewrite import resolve

    named = [(what, getattr(args, dest, None)) for dest, what in FOLDER_INPUTS.items()]
    named.append(("the literature setting's library", getattr(settings, "literature", None)))
    out: list[tuple[str, Path]] = []
    for what, value in named:
        if value and str(value).strip() and resolve(str(value).strip()).is_dir():
            folder = resolve(str(value).strip())
            if all(folder != f for _, f in out):
                out.append((what, folder))
    return out


def protect_inputs(plan: WritePlan, args: Any, settings: Any = None) -> WritePlan:
    """``plan`` with every input folder of this command (:func:`input_folders`) protected: no output inside it."""
    for what, folder in input_folders(args, settings):
        plan.protect_folder(what, folder)
    return plan


def said_backups(done: Iterable[tuple[Path, Path | None]]) -> None:
    """One line per file replaced with a backup kept (``--in-place``, ``--force``, a second ``--fix``)."""
    for path, bak in done:
        if bak is not None:
            where = bak.name if bak.parent == path.parent else str(bak)
            print(f"  kept the original of {path.name} as {where}", file=sys.stderr)


def project_copies(project: Any, changed: Mapping[int, str], copy_of: Callable[[int], Path], *,
                   always: Iterable[int] = ()) -> dict[int, tuple[Path, str]]:
    """What to write for a change of ``project`` (``changed``: file index -> its new text), as file index -> (path,
    text): each changed file (and each of ``always``) at ``copy_of(i)``, and every file on the include path
    between the main file and a file copied elsewhere, copied too, so that the main file's copy compiles the
    changed text: each copy's ``\\input``/``\\include``/``\\subfile``/``\\import`` of a copied file names the copy
    (resolved as LaTeX resolves it, from the main file's folder or the including file's). A file written over
    itself (``--in-place``) is not renamed, and its text is left as changed. When the main file's copy goes to
    a folder that holds none of the project's files (``-o ../out/main.tex``), the project is copied there, so
    that it compiles where it is written (:func:`citefinder.text.project.copies_in`). Shared by ``fill`` and
    ``check --fix``."""
    from citefinder.text.project import copies_in
    from citefinder.text.safewrite import resolve

    paths = {i: copy_of(i) for i in (*changed, *always)}
    out_dir = resolve(paths[0]).parent if 0 in paths else project.main.parent
    if project.latex and not any(out_dir == f.path.parent or out_dir in f.path.parents for f in project.files):
        return copies_in(project, out_dir, changed, paths[0], copy_of)  # a folder holding none of the project's
    moved = _moved(project, paths)
    while project.latex:  # until no file outside includes a copied one
        more = [i for i in range(len(project.files)) if i not in paths
                and any(target in moved for _, target in project.includes_of(i))]
        if not more:
            break
        paths.update({i: copy_of(i) for i in more})
        moved = _moved(project, paths)
    out = {}
    for i, path in sorted(paths.items()):  # file order: the main file first
        text = changed.get(i, project.files[i].text)
        out[i] = (path, text if path == project.files[i].path else point_includes(project, i, text, moved))
    return out


def _moved(project: Any, paths: Mapping[int, Path]) -> dict[Path, Path]:
    """original -> copy of every file (the main one aside: nothing includes it) written elsewhere than over itself."""
    return {project.files[i].path: p for i, p in paths.items() if i != 0 and p != project.files[i].path}


def point_includes(project: Any, file: int, text: str, moved: Mapping[Path, Path]) -> str:
    """``text`` (file ``file``'s, as changed) with each include of a file copied elsewhere (``moved``: original ->
    copy) naming the copy instead: the file's own name argument only, as written (``sections/intro`` ->
    ``sections/intro.cited``; ``intro.tex`` -> ``intro.cited.tex``), so the copy compiles the copies."""
    if not moved or not project.latex:
        return text
    edits = []
    for inc, target in project.includes_of(file, text):
        copy = moved.get(target)
        if copy is None or inc.name_start < 0:
            continue
        written = text[inc.name_start:inc.name_end]
        folder = written[: len(written) - len(written.replace("\\", "/").rsplit("/", 1)[-1])]
        name = copy.name if written.lower().endswith(".tex") else copy.name.removesuffix(".tex")
        edits.append((inc.name_start, inc.name_end, folder + name))
    return apply_edits(text, edits)


def plan_output(label: str, path: Path, *, inputs: Mapping[str, Iterable[Path]], owner: Path | None, force: bool,
                library: Path | None = None, of: str = "this input", parents: bool = False) -> WritePlan:
    """The plan of a command that writes one file (``eval --out``, ``optimize -o``, ``reranker examples-from-latex
    -o``): ``inputs`` (what they are -> the files) and the library folder protected, ``path`` checked now, before
    any work (InputError, one line, when refused)."""
    plan = WritePlan(draft=owner, force=force, of=of)
    for what, paths in inputs.items():
        plan.protect(what, paths)
    if library is not None:
        plan.protect_folder("the library folder", library)
    plan.target(label, path, parents=parents)
    return plan


def model_folder(label: str, path: Path, *, inputs: Iterable[Path], library: Path, kind: str) -> Path:
    """Check before training that a model folder may be written at ``path``: not a file, not an input nor a folder
    holding one, not the library folder nor one holding it (inside it is where models go), and new, empty or a
    model of ``kind`` (``citefinder_reranker``, ``citefinder_embedder``: its card says so) CiteFinder trained."""
    from citefinder.rank.cards import read_card

    plan = WritePlan()
    plan.protect("an input of this run", inputs)
    plan.protect_folder("the library folder", library, inside_ok=True)
    return plan.target_folder(label, path, ours=lambda folder: bool((read_card(folder) or {}).get(kind)))
