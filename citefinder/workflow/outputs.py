"""Where a fill's filled files go, for both the CLI and the workflow: each file of a LaTeX project that changes is
written beside its original (``intro.cited.tex``) or in place after a ``.bak``; every file on the include path to a
copy is copied too so the main file's copy compiles (:func:`project_copies`, shared with ``check --fix``); the
:class:`~citefinder.text.safewrite.WritePlan` protecting the project (:func:`project_plan`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citefinder.text.project import apply_edits
from citefinder.text.safewrite import WritePlan

__all__ = ["TEXT_SUFFIXES", "cited_name", "planned_outputs", "plan_output_file", "point_includes", "project_copies",
           "project_plan", "put_filled"]

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


def planned_outputs(project: Any, output: Path | None, *, bib_mode: bool, in_place: bool) -> dict[int, Path]:
    """file index -> where its filled text goes, planned before any work: the main file (-o, else DRAFT.cited.tex),
    each other file that holds a placeholder (NAME.cited.tex) and each file on the include path between the main
    file and one of those (its copy includes theirs); with --in-place: each file itself."""
    from citefinder.text.slots import find_slots

    if not bib_mode and output is None and not in_place:
        return {}  # filling from the library, the filled draft is written only when asked for (-o)
    holding = project.file_slots(find_slots(project.text, latex=project.latex))
    copies = project_copies(project, {i: project.files[i].text for i in holding},
                            _namer(project, output, in_place=in_place), always=[0])
    return {i: path for i, (path, _) in copies.items()}


def _namer(project: Any, output: Path | None, *, in_place: bool) -> Callable[[int], Path]:
    """Where file ``i``'s filled text goes: the main file's to -o when given; the others' beside them (or over them)."""
    def copy_of(i: int) -> Path:
        if i == 0 and output is not None:
            return output
        return _output_of(project.files[i].path, in_place=in_place and project.latex)

    return copy_of


def _output_of(path: Path, *, in_place: bool) -> Path:
    return path if in_place else cited_name(path)


def plan_output_file(plan: Any, project: Any, i: int, path: Path, *, named: bool, in_place: bool) -> None:
    in_place = in_place and not named and project.latex and path == project.files[i].path
    copy = f"the filled copy of {project.name_of(project.files[i].path)}"
    label = "-o" if named else ("--in-place" if in_place else copy)
    plan.target(label, path, in_place=in_place, parents=i != 0)  # -o elsewhere: its sections/ made there


def put_filled(plan: Any, project: Any, slots: list[Any], keys: Mapping[int, Sequence[str]], command: str,
                outputs: dict[int, Path], *, in_place: bool) -> list[Path]:
    """Queue each filled file (the main one always, when it has an output; the others when they changed) with the
    cites CiteFinder wrote into it (and those it had written there before, :func:`~citefinder.text.written.
    carried_cites`), and a copy of every file on the include path to a filled copy, naming the filled copies
    (:func:`project_copies`): the main file's copy compiles the filled text."""
    from citefinder.text.written import carried_cites, cites_written, new_cites

    if not outputs:
        return []
    changed = project.fill(slots, keys, command=command)
    namer = _namer(project, None, in_place=in_place)
    copies = project_copies(project, changed, lambda i: outputs.get(i) or namer(i), always=[0])
    ours = cites_written(f.path for f in project.files)
    written = []
    for i, (path, text) in copies.items():
        source = project.files[i]
        if i not in changed and path == source.path:
            continue  # the main file, written over itself, with nothing filled
        if i not in outputs:  # a file the plan did not foresee (a slot the engine found, a file on its path)
            outputs[i] = path
            plan_output_file(plan, project, i, path, named=False, in_place=in_place)
        plan.put(path, text, codec=source.encoding, bom=source.bom, source=source.path,
                 cites=[*new_cites(source.text, text), *carried_cites(source.text, text, ours.of(source.path))])
        written.append(path)
    return written
