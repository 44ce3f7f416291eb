"""Where ``fill`` and ``check`` write: the names of their outputs and the :class:`~citefinder.text.safewrite.WritePlan`
that protects a LaTeX project (every file it reads, every .bib it names whether used or not, every ``--bib``,
every file linked to the library, the library's folder) before any work is done."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from citefinder.text.safewrite import WritePlan

TEXT_SUFFIXES = (".tex", ".md", ".txt", ".markdown")


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


def said_backups(done: Iterable[tuple[Path, Path | None]]) -> None:
    """One line per file replaced with a backup kept (``--in-place``, ``--force``, a second ``--fix``)."""
    for path, bak in done:
        if bak is not None:
            where = bak.name if bak.parent == path.parent else str(bak)
            print(f"  kept the original of {path.name} as {where}", file=sys.stderr)


def point_includes(project: Any, text: str, renamed: dict[Path, Path]) -> str:
    """The main file's ``text`` with each ``\\input``/``\\include`` of a file whose filled copy is written
    elsewhere (``renamed``: original -> copy) naming the copy, so the filled main file compiles the filled text."""
    from citefinder.text.latex import scan_latex

    if not renamed or not project.latex:
        return text
    main = project.main
    edits = []
    for inc in scan_latex(text).includes:
        found = [c.resolve() for c in (main.parent / inc.path, main.parent / f"{inc.path}.tex") if c.is_file()]
        copy = next((renamed[c] for c in found if c in renamed), None)
        if copy is None:
            continue
        written, folder = inc.path, inc.path[: len(inc.path) - len(Path(inc.path).name)]
        at = text.rfind(written, inc.start, inc.end)
        if at < 0:  # \import{dir/}{file}: the file's own argument
            written, folder = Path(inc.path).name, ""
            at = text.rfind(written, inc.start, inc.end)
        name = copy.name if written.lower().endswith(".tex") else copy.name.removesuffix(".tex")
        if at >= 0:
            edits.append((at, at + len(written), folder + name))
    out, pos = [], 0
    for start, end, new in sorted(edits):
        out += [text[pos:start], new]
        pos = end
    out.append(text[pos:])
    return "".join(out)


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
