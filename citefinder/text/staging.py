"""The file-system steps of the one writer (:mod:`citefinder.text.safewrite`).

- :func:`stage`: the new bytes in a temporary file beside the target, made by ``tempfile.mkstemp`` (a random
  name, created exclusively: never through a link planted in the folder), flushed, with the target's mode.
- :func:`keep_aside`: the file about to be replaced kept under another name, a hard link (no disk space, its
  bytes, mode and times as they were; a copy where the file system has no hard links), made exclusively:
  the visible backup (``FILE.bak``), or a hidden undo copy removed once the write succeeded.
- :func:`write_all`: several files replaced together, all or nothing: a failure at any step (a full disk,
  a lost permission) puts back every file already replaced, removes every backup and temporary file it
  made, and says exactly what is where.
- :func:`new_folder` / :func:`replace_folder`: a folder (a trained model) written beside its target and
  renamed over it once complete.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from citefinder.errors import InputError

TMP_SUFFIX = ".citefinder-tmp"


def default_mode() -> int:
    """The mode a new file gets (0o666 less the umask), read without changing the umask where /proc tells."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def stage(path: Path, data: bytes, mode: int | None = None) -> Path:
    """``data`` in a new temporary file beside ``path`` (mode: ``mode``, else that of the file it replaces,
    else a new file's); removed again when it cannot be written whole (the OSError is raised)."""
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            mode = default_mode()
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def replace(path: Path, data: bytes, mode: int | None = None) -> None:
    """:func:`stage` ``data`` beside ``path`` and rename it over ``path``: whole or not at all (an OSError
    leaves ``path`` as it was and no temporary file)."""
    tmp = stage(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def keep_aside(path: Path, name: Path | None = None, *, taken: Callable[[Path], bool] = lambda p: False) -> Path:
    """``path``'s current file also under ``name`` (``name.1``, ``name.2`` ... when that exists or is
    ``taken``), or under a random hidden name beside it when ``name`` is None; never over another file."""
    for attempt in range(1000):
        if name is None:
            target = path.with_name(f".{path.name}.{secrets.token_hex(6)}.citefinder-undo")
        else:
            target = name if attempt == 0 else name.with_name(f"{name.name}.{attempt}")
            if target.exists() or target.is_symlink() or taken(target):
                continue
        try:
            os.link(path, target, follow_symlinks=False)
            return target
        except FileExistsError:
            continue
        except OSError:  # no hard links here (or not allowed): an exclusive copy
            if _copy(path, target):
                return target
    raise FileExistsError(f"no free name for a copy of {path}")


def _copy(path: Path, target: Path) -> bool:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
        shutil.copystat(path, target)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return True


@dataclass(frozen=True)
class Step:
    """One file of a :func:`write_all`: its bytes, the backup name to keep its original under (None: no
    visible backup), whether missing folders above it are made."""

    path: Path
    data: bytes
    backup: Path | None = None
    parents: bool = False


def write_all(steps: Sequence[Step], *, taken: Callable[[Path], bool] = lambda p: False
              ) -> dict[Path, Path | None]:
    """Write every step, all or nothing: each path -> the backup kept of its original (None when none).

    Every file is staged first, then every original is kept aside, then each staged file is renamed over
    its target. On any failure every replaced file is put back, every backup, undo copy, temporary file
    and folder made is removed, and an InputError says so (or names each file that could not be put back
    and where its original is)."""
    made: list[Path] = []
    staged: dict[Path, Path] = {}
    aside: dict[Path, Path] = {}
    replaced: list[Path] = []
    current = steps[0].path if steps else Path()
    try:
        for s in steps:
            current = s.path
            if s.parents and not s.path.parent.is_dir():
                _make_folders(s.path.parent, made)
            staged[s.path] = stage(s.path, s.data)
        for s in steps:
            current = s.path
            if s.path.exists():
                aside[s.path] = keep_aside(s.path, s.backup, taken=lambda p: taken(p) or p in aside.values())
        for s in steps:
            current = s.path
            os.replace(staged[s.path], s.path)
            del staged[s.path]
            replaced.append(s.path)
    except OSError as e:
        left = _undo(staged, aside, replaced, made)
        said = "; ".join(left) + "." if left else "nothing was changed (no backup was kept)."
        raise InputError(f"Cannot write {current}: {e.strerror or e}; {said}") from e
    out: dict[Path, Path | None] = {}
    for s in steps:
        kept = aside.get(s.path)
        if kept is not None and s.backup is None:
            try:
                kept.unlink(missing_ok=True)  # the undo copy: the write succeeded
            except OSError:  # a hidden copy of the old text is left; the write itself is whole
                pass
            kept = None
        out[s.path] = kept
    return out


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and the missing folders above it, each noted in ``made`` (deepest first) once made."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        f.mkdir()
        made.insert(0, f)


def _undo(staged: dict[Path, Path], aside: dict[Path, Path], replaced: list[Path], made: list[Path]) -> list[str]:
    """Put every replaced file back, remove what was made; the lines saying what could not be undone."""
    left, back = [], 0
    for tmp in staged.values():
        tmp.unlink(missing_ok=True)
    for path in reversed(replaced):
        original = aside.pop(path, None)
        try:
            if original is not None:
                os.replace(original, path)
            else:
                path.unlink(missing_ok=True)
            back += 1
        except OSError as e:
            left.append(f"{path} holds the new text ({e.strerror or e})"
                        + (f"; its original is {original}" if original is not None else ""))
    for path, original in aside.items():
        try:
            original.unlink(missing_ok=True)
        except OSError:
            left.append(f"{original} (a copy of {path}) is left")
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            pass
    if left:
        left.insert(0, f"{back} file(s) were put back as they were" if back else "no file was put back")
    return left


def new_folder(output: Path) -> Path:
    """An empty folder named like ``output`` inside a new hidden folder beside it, to write a folder into
    before :func:`replace_folder` renames it over ``output`` (so a model's card keeps its own name)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    holder = Path(tempfile.mkdtemp(dir=output.parent, prefix=f".{output.name}.", suffix=TMP_SUFFIX))
    folder = holder / output.name
    folder.mkdir()
    return folder


def discard_folder(staged: Path) -> None:
    """Remove a folder made by :func:`new_folder` (a write that failed)."""
    shutil.rmtree(staged.parent, ignore_errors=True)


def replace_folder(staged: Path, output: Path) -> Path:
    """Rename the complete folder ``staged`` (from :func:`new_folder`) over ``output``: an earlier folder
    there is moved aside first and removed only once the new one is in place (put back on failure)."""
    holder = staged.parent
    old = holder / (output.name + ".old")
    had = output.exists() or output.is_symlink()
    try:
        if had:
            os.rename(output, old)
    except OSError as e:
        shutil.rmtree(holder, ignore_errors=True)
        raise InputError(f"Cannot replace {output}: {e.strerror or e}; the earlier folder is as it was.") from e
    try:
        os.rename(staged, output)
    except OSError as e:
        if had:
            try:
                os.rename(old, output)
            except OSError:
                raise InputError(f"Cannot write {output}: {e.strerror or e}; the earlier folder is now {old}, "
                                 f"and the new one {staged}.") from e
        shutil.rmtree(holder, ignore_errors=True)
        raise InputError(f"Cannot write {output}: {e.strerror or e}; "
                         + ("the earlier folder is as it was." if had else "nothing was written.")) from e
    shutil.rmtree(holder, ignore_errors=True)
    return output
