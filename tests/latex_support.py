"""Shared checks for the LaTeX tests."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citefinder.config import Settings
from citefinder.text.slots import _PLACEHOLDER_KEY_RE
from citefinder.types import Slot

LATEX = Path(__file__).parent / "data" / "latex"
CITE = re.compile(r"\\([A-Za-z]*cite[A-Za-z]*\*?)(?:\[[^\]]*\]){0,2}\{([^{}]*)\}")


def assert_only_placeholders_changed(original: str, filled: str, slots: Sequence[Slot]) -> list[str]:
    """``filled`` equals ``original`` byte for byte outside the slots' spans; returns what each span became."""
    spans = sorted({(s.start, s.end) for s in slots})
    pattern, pos = "", 0
    for a, b in spans:
        pattern += re.escape(original[pos:a]) + "(.*?)"
        pos = b
    pattern += re.escape(original[pos:])
    m = re.fullmatch(pattern, filled, re.DOTALL)
    assert m, "text outside the placeholders changed"
    return list(m.groups())


def cited_keys(text: str) -> list[str]:
    """Every key of every cite command in ``text`` (placeholders such as ``?`` and ``TODO`` left out)."""
    keys = [k.strip() for m in CITE.finditer(text) for k in m.group(2).split(",")]
    return [k for k in keys if k and not _PLACEHOLDER_KEY_RE.fullmatch(k)]


def make_refs_library(root: Path) -> Path:
    """A library at ``root`` holding the 24 entries of tests/data/latex/refs.bib."""
    from citefinder.library.store import Library

    assert Library.open(Settings(library=root)).import_files([LATEX / "refs.bib"]).added == 24
    return root


def copied_library(library: Path, tmp_path: Path) -> Path:
    """A test's own copy of the library folder ``library`` (``tmp_path/library``)."""
    shutil.copytree(library, tmp_path / "library")
    return tmp_path / "library"


def plan_project_outputs(project: Any) -> tuple[Any, dict[int, Path]]:
    """A write plan for ``project``'s filled copies (``.cited``, one a file, not in place) and those outputs."""
    from citefinder.cli.outputs import project_plan
    from citefinder.workflow.outputs import plan_output_file, planned_outputs

    plan = project_plan(project, [], None)
    outputs = planned_outputs(project, None, bib_mode=True, in_place=False)
    for i, path in outputs.items():
        plan_output_file(plan, project, i, path, named=False, in_place=False)
    return plan, outputs
