"""Where ``fill`` and ``check`` write: the names of their outputs and the :class:`~citefinder.text.safewrite.WritePlan`
that protects a LaTeX project (every file it reads, every .bib it names whether used or not, every ``--bib``,
every file linked to the library, the library's folder, every folder given as an input: :data:`FOLDER_INPUTS`)
before any work is done."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from citefinder.text.safewrite import WritePlan
from citefinder.workflow.outputs import TEXT_SUFFIXES, cited_name, point_includes, project_copies, project_plan

__all__ = ["FOLDER_INPUTS", "TEXT_SUFFIXES", "cited_name", "input_folders", "model_folder", "plan_output",
           "point_includes", "project_copies", "project_plan", "protect_inputs", "said_backups"]

# Every option whose value is a folder of papers the command only reads (argparse dest -> what it is called in a
# refusal): nothing is ever written inside it, whatever the flags (--force included), like the library folder.
# tests/test_one_writer.py walks the CLI: a new folder option fails it until it is filed here or there.
FOLDER_INPUTS = {"literature": "the literature library", "against": "the reference library",
                 "source": "the literature library"}


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
