"""The one way CiteFinder writes a file the user can see (fill, check, exports, the memory's exports, the
Cite page's workspace, a library's link state): plan, then commit.

A :class:`WritePlan` first learns what must never be written (the draft and every file it reads, every .bib
it names, every linked file, the library folder) and where each output goes; each target is resolved
(``~``, ``..``, symlinks; a hard link or another spelling of a protected file is the same inode) and
refused in one line *before* any work is done when it is, or would replace, a protected file or a folder,
when it is read-only (unless ``force``), or when it exists and is not a file CiteFinder wrote for this
draft (unless ``force``). :meth:`WritePlan.commit` then encodes every file (every encoding failure said,
all together, before anything is touched), keeps ``FILE.bak`` (``FILE.bak.1`` ... never over an older
backup) of each file replaced in place, writes every file to a temporary file beside it with the mode of
the file it replaces, and only then renames each over its target. What was written is remembered in
``.citefinder-written.json`` beside it (:mod:`citefinder.text.written`): which draft it belongs to and,
for a ``.tex``, the cites CiteFinder put there, so that learning can tell them from the user's own.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citefinder.errors import InputError
from citefinder.text import written

log = logging.getLogger(__name__)

__all__ = ["WritePlan", "atomic_write", "backup", "describe_encoding", "resolve"]


def resolve(path: Path | str) -> Path:
    """``path`` absolute, with ``~``, ``..`` and symlinks resolved (a missing file resolves as far as it can)."""
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:  # a hard link, or another spelling on a case-insensitive file system: the same inode
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def describe_encoding(codec: str, original: bytes | None = None) -> str:
    """The name a user knows for a file's encoding: a one-byte file without Windows-only bytes is Latin-1."""
    if codec.lower() in ("cp1252", "windows-1252", "latin-1", "latin1", "iso-8859-1"):
        if original is not None and not any(0x80 <= b <= 0x9F for b in original):
            return "Latin-1 (ISO-8859-1)"
        return "Windows-1252"
    return {"utf-8": "UTF-8", "utf-8-sig": "UTF-8"}.get(codec.lower(), codec)


def _offending_key(text: str, start: int, end: int) -> str:
    """The key (or word) around ``text[start:end]``: what the user must change."""
    stops = "{},\\ \t\r\n"
    a, b = start, end
    while a > 0 and text[a - 1] not in stops:
        a -= 1
    while b < len(text) and text[b] not in stops:
        b += 1
    return text[a:b]


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``path`` whole or not at all: a temporary file beside it (with the mode of the file it replaces,
    or ``mode``), flushed, then renamed over it. For CiteFinder's own files (state, workspace) and as the
    last step of :meth:`WritePlan.commit`."""
    tmp = _stage(path, data, mode)
    try:
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"Cannot write {path}: {e.strerror or e}") from e


def _stage(path: Path, data: bytes, mode: int | None) -> Path:
    tmp = path.with_name(f".{path.name}.citefinder-tmp")
    try:
        if mode is None:
            try:
                mode = stat.S_IMODE(path.stat().st_mode)
            except OSError:
                mode = None
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode | stat.S_IWUSR)  # writable by its owner until renamed (then the file's own mode)
            os.chmod(tmp, mode)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"Cannot write {path}: {e.strerror or e}; nothing was changed.") from e
    return tmp


def backup(path: Path) -> Path:
    """Copy ``path`` to ``path.bak`` (``.bak.1``, ``.bak.2`` ... when that exists: no backup is overwritten),
    bytes and mode."""
    target = path.with_name(path.name + ".bak")
    n = 1
    while target.exists() or target.is_symlink():
        target = path.with_name(f"{path.name}.bak.{n}")
        n += 1
    try:
        shutil.copy2(path, target)
    except OSError as e:
        raise InputError(f"Cannot back up {path} to {target}: {e.strerror or e}; nothing was changed.") from e
    return target


@dataclass
class _Put:
    label: str
    path: Path
    text: str | bytes
    codec: str = "utf-8"
    bom: bytes = b""
    cites: Sequence[written.Cite] = ()
    source: Path | None = None


@dataclass
class WritePlan:
    """Where one command may write, checked before it works and committed all at once.

    ``draft``: the draft the outputs belong to (an existing output CiteFinder wrote for another draft, or
    that it never wrote, is not replaced without ``force``). ``force``: replace a read-only file, or a file
    CiteFinder did not write."""

    draft: Path | None = None
    force: bool = False
    protected: list[tuple[str, Path]] = field(default_factory=list)
    folders: list[tuple[str, Path]] = field(default_factory=list)
    editable: set[Path] = field(default_factory=set)
    targets: dict[Path, tuple[str, bool]] = field(default_factory=dict)
    kept: set[Path] = field(default_factory=set)
    puts: list[_Put] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.draft is not None:
            self.draft = resolve(self.draft)

    def protect(self, what: str, paths: Iterable[Path | str], *, editable: bool = False) -> None:
        """Never write over these files (``editable``: only in place, with a backup: the draft's .tex files)."""
        for p in paths:
            r = resolve(p)
            self.protected.append((what, r))
            if editable:
                self.editable.add(r)
        for target, (label, in_place) in self.targets.items():
            self._check_protected(label, target, in_place)

    def protect_folder(self, what: str, folder: Path | str) -> None:
        """Never write anything inside ``folder`` (the library's folder)."""
        r = resolve(folder)
        self.folders.append((what, r))
        for target, (label, _) in self.targets.items():
            self._check_folders(label, target)

    def target(self, label: str, path: Path | str, *, in_place: bool = False, keep: bool = False) -> Path:
        """Check now that ``path`` may be written (InputError, one line, when not); its resolved path.
        ``in_place``: the file is one of the draft's and is replaced on purpose (a backup is kept first);
        ``keep``: an earlier output there is kept as a backup too."""
        r = resolve(path)
        if r.is_dir():
            raise InputError(f"{label} {path} is a folder; give a file name (nothing was written).")
        if not r.parent.is_dir():
            raise InputError(f"{label} {path}: the folder {r.parent} does not exist (nothing was written).")
        earlier = self.targets.get(r)
        if earlier is not None and earlier[0] != label:
            raise InputError(f"{label} {path} is also {earlier[0]}; give two different files (nothing was written).")
        self._check_protected(label, r, in_place)
        self._check_folders(label, r)
        if r.exists() and not self.force:
            if not os.access(r, os.W_OK) or not stat.S_IMODE(r.stat().st_mode) & stat.S_IWUSR:
                raise InputError(f"{label} {path} is read-only; CiteFinder does not replace it unless you give "
                                 "--force (nothing was written).")
            if not in_place and not written.is_ours(r, self.draft):
                raise InputError(f"{label} {path} exists and is not a file CiteFinder wrote for this draft; "
                                 "choose another name, or give --force to replace it (nothing was written).")
        self.targets[r] = (label, in_place)
        if keep:
            self.kept.add(r)
        return r

    def _check_protected(self, label: str, target: Path, in_place: bool) -> None:
        for what, p in self.protected:
            if _same(target, p) and not (in_place and target in self.editable and target == p):
                raise InputError(f"{label} {target} is {what}; it would be overwritten. Choose another file name "
                                 "(nothing was written).")

    def _check_folders(self, label: str, target: Path) -> None:
        for what, folder in self.folders:
            if _under(target, folder):
                raise InputError(f"{label} {target} is inside {what} {folder}; choose a file outside it "
                                 "(nothing was written).")

    def put(self, path: Path | str, text: str | bytes, *, codec: str = "utf-8", bom: bytes = b"",
            cites: Sequence[written.Cite] = (), source: Path | None = None) -> None:
        """Queue ``text`` for a planned target (encoded in ``codec`` at :meth:`commit`); ``cites``: the cite
        commands CiteFinder put into it (remembered, so that learning does not take them for the user's);
        ``source``: the file whose encoding ``codec`` is (named when the text does not fit it)."""
        r = resolve(path)
        if r not in self.targets:
            raise ValueError(f"{path} was not planned (WritePlan.target first)")
        self.puts.append(_Put(self.targets[r][0], r, text, codec, bom, tuple(cites), source))

    def commit(self) -> list[tuple[Path, Path | None]]:
        """Write every queued file, all or nothing: (path, its backup or None) per file written."""
        encoded: list[tuple[_Put, bytes]] = []
        problems = []
        for put in self.puts:
            if isinstance(put.text, bytes):
                encoded.append((put, put.text))
                continue
            try:
                encoded.append((put, put.bom + put.text.encode(put.codec)))
            except UnicodeEncodeError as e:
                source = put.source or put.path
                original = source.read_bytes() if source.is_file() else None
                key = _offending_key(put.text, e.start, e.end)
                problems.append(f"{source.name} is written in {describe_encoding(put.codec, original)}, which "
                                f"cannot hold {put.text[e.start:e.end]!r} (in {key!r})")
        if problems:
            raise InputError("; ".join(problems) + ". Nothing was written: use keys of plain letters and digits.")
        backups: dict[Path, Path] = {}
        staged: list[tuple[Path, Path]] = []
        try:
            for put, data in encoded:
                if (self.targets[put.path][1] or put.path in self.kept) and put.path.exists():
                    backups[put.path] = backup(put.path)
                staged.append((_stage(put.path, data, None), put.path))
        except InputError:
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
            raise
        done = []
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as e:
                tmp.unlink(missing_ok=True)
                raise InputError(f"Cannot write {path}: {e.strerror or e}") from e
            done.append((path, backups.get(path)))
        for put, data in encoded:
            written.remember(put.path, data, self.draft, put.cites)
        self.puts = []
        return done
