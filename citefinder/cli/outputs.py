"""Where the command line writes, and how: never over one of the user's inputs, each file in its own
encoding, atomically, and ``--in-place`` only after a backup that overwrites nothing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from citefinder.errors import InputError


def cited_name(draft: Path) -> Path:
    """``paper.tex`` -> ``paper.cited.tex`` beside it (a PDF draft's text becomes ``.cited.txt``)."""
    suffix = draft.suffix if draft.suffix.lower() in (".tex", ".md", ".txt", ".markdown") else ".txt"
    return draft.with_name(f"{draft.stem}.cited{suffix}")


def _same(a: Path, b: Path) -> bool:
    a, b = a.expanduser().resolve(), b.expanduser().resolve()
    if a == b:
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_inputs(outputs: Iterable[tuple[str, Path]], inputs: Iterable[tuple[str, Path]]) -> None:
    """InputError (one line) when an output path is one of the inputs: the draft, a .bib, a linked file."""
    inputs = list(inputs)
    for what, out in outputs:
        for kind, path in inputs:
            if _same(out, path):
                raise InputError(f"{what} {out} is {kind}; it would be overwritten. Choose another file name "
                                 "(nothing was written).")


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, then a rename)."""
    tmp = path.with_name(f".{path.name}.citefinder-tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"Cannot write {path}: {e.strerror or e}") from e


def backup(path: Path) -> Path:
    """Copy ``path`` to ``path.bak`` (``.bak2``, ``.bak3`` ... when that exists: no backup is overwritten)."""
    target = path.with_name(path.name + ".bak")
    n = 2
    while target.exists():
        target = path.with_name(f"{path.name}.bak{n}")
        n += 1
    try:
        shutil.copy2(path, target)
    except OSError as e:
        raise InputError(f"Cannot back up {path} to {target}: {e.strerror or e}; nothing was changed.") from e
    return target
