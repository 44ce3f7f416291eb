"""The one way CiteFinder writes a file the user can see (every command's outputs: fill, check, eval, optimize,
the training commands' examples and model folders; the Cite page's workspace and .bib copies, settings, a
library's link state and manifest): plan, then commit.

A :class:`WritePlan` first learns what must never be written (the draft and every file it reads, every .bib
it names, every input of the command, the library folder) and where each output goes; each target is resolved
as the operating system will open it (``~``, then symlinks component by component, so ``..`` after a linked
folder goes where the link leads; a hard link or another spelling of a protected file is the same inode) and
refused in one line *before* any work is done when it is, or would replace, a protected file or a folder,
CiteFinder's own record, a backup this run keeps, an existing .bib it did not write (even with ``force``), a
read-only file (unless ``force``), or an existing file that is not one CiteFinder wrote for this draft (unless
``force``, which keeps ``FILE.bak`` of it). A .bib planned to *grow* (``new-references.bib``, which the user may
name in ``\\bibliography`` and edit by hand) is the exception: it may be a .bib the draft reads and need not be
what CiteFinder last wrote there, only a file CiteFinder once wrote, because what is put there must begin with
every byte it holds now, and it must still hold them when the plan commits. The name of every backup the run
will keep (``FILE.bak``, ``FILE.bak.1`` ... never over an older one) is chosen then too, so no output can take it.
:meth:`WritePlan.commit` encodes every file (every encoding failure said, all together, before anything is
touched) and writes them, with the record of what was written (``.citefinder-written.json`` beside them:
which draft each belongs to and, for a ``.tex``, the cites CiteFinder put there, so that learning can tell
them from the user's own), all or nothing through :func:`citefinder.text.staging.write_all`: temporary files
made by ``mkstemp`` beside each target with the mode of the file it replaces, renamed over them only once
every one is written; on a failure every file is put back and every backup made is removed.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citefinder.errors import InputError
from citefinder.text import staging, written
from citefinder.text.encodings import describe_encoding, unencodable

log = logging.getLogger(__name__)

__all__ = ["WritePlan", "atomic_replace", "atomic_write", "describe_encoding", "resolve", "unencodable"]

FORCE_NEVER = "--force replaces only an output you named, never a .bib or a file of the draft"


def resolve(path: Path | str) -> Path:
    """``path`` absolute, ``~`` expanded and every symlink resolved component by component, as the operating
    system opens it (``link/../x`` is ``x`` beside the link's target, not beside the link); a missing file
    resolves as far as it can."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:  # a hard link, or another spelling on a case-insensitive file system: the same inode
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``path`` whole or not at all: a temporary file made exclusively beside it (with the mode of the
    file it replaces, or ``mode``), flushed, then renamed over it. For CiteFinder's own files (state,
    workspace, settings), which no plan protects; a failure is an InputError saying nothing changed."""
    try:
        staging.replace(Path(path), data, mode)
    except OSError as e:
        raise InputError(f"Cannot write {path}: {e.strerror or e}; nothing was changed.") from e


def atomic_replace(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """:func:`atomic_write` raising the OSError itself (a library's manifest: its caller says what the failed
    step means for the library)."""
    staging.replace(Path(path), data, mode)


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

    ``draft``: the input the outputs belong to (an existing output CiteFinder wrote for another, or that it
    never wrote, is not replaced without ``force``); ``of``: what that input is called in a refusal.
    ``force``: replace a read-only file, or a file CiteFinder did not write (keeping ``FILE.bak`` of it);
    never a protected file, nor an existing .bib CiteFinder did not write."""

    draft: Path | None = None
    force: bool = False
    of: str = "this draft"
    protected: list[tuple[str, Path]] = field(default_factory=list)
    folders: list[tuple[str, Path, bool]] = field(default_factory=list)
    editable: set[Path] = field(default_factory=set)
    targets: dict[Path, tuple[str, bool]] = field(default_factory=dict)
    backups: dict[Path, Path] = field(default_factory=dict)
    parents: set[Path] = field(default_factory=set)
    puts: list[_Put] = field(default_factory=list)
    grown: dict[Path, bytes] = field(default_factory=dict)  # a target that only grows -> the bytes it holds now
    growing: set[Path] = field(default_factory=set)  # the targets that only grow (protected files they may be)

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
            if target not in self.growing:
                self._check_protected(label, target, in_place)

    def protect_folder(self, what: str, folder: Path | str, *, inside_ok: bool = False) -> None:
        """Never write anything inside ``folder`` (the library's folder), nor replace a folder holding it
        (``inside_ok``: a model folder may go inside it, e.g. ``<library>/rerankers/NAME``)."""
        r = resolve(folder)
        self.folders.append((what, r, inside_ok))
        for target, (label, _) in self.targets.items():
            self._check_folders(label, target)

    def target(self, label: str, path: Path | str, *, in_place: bool = False, keep: bool = False,
               parents: bool = False, grow: bool = False) -> Path:
        """Check now that ``path`` may be written (InputError, one line, when not); its resolved path.
        ``in_place``: the file is one of the draft's and is replaced on purpose (a backup is kept first);
        ``keep``: an earlier output there is kept as a backup too; ``parents``: missing folders above it
        are made when it is written; ``grow``: a .bib that only grows (:meth:`held` is what it holds now, and
        what is put there must begin with it): it may be a .bib the draft reads when it is not there yet or
        CiteFinder wrote it (the user may have edited it since), never one CiteFinder never wrote."""
        r = resolve(path)
        if r.is_dir():
            raise InputError(f"{label} {path} is a folder; give a file name (nothing was written).")
        folder = next((f for f in (r.parent, *r.parent.parents) if f.exists()), r.parent)
        if folder != r.parent and not parents or not folder.is_dir():
            raise InputError(f"{label} {path}: the folder {r.parent} does not exist (nothing was written).")
        if r.name == written.MANIFEST or r.name.endswith((staging.TMP_SUFFIX, ".citefinder-undo")):
            raise InputError(f"{label} {path} is a name CiteFinder keeps for its own files; choose another file "
                             "name (nothing was written).")
        earlier = self.targets.get(r)
        if earlier is not None and earlier[0] != label:
            raise InputError(f"{label} {path} is also {earlier[0]}; give two different files (nothing was written).")
        of = next((o for o, b in self.backups.items() if b == r and o != r), None)
        if of is not None:
            raise InputError(f"{label} {path} is the name of the backup this run keeps of {of.name}; choose "
                             "another file name (nothing was written).")
        # a .bib that grows may be one the draft reads when nothing it holds can be lost: it is not there yet, or
        # CiteFinder wrote it (new-references.bib, which the CLI says to name in \bibliography)
        grow = grow and r.suffix.lower() == ".bib" and (not r.exists() or written.record(r) is not None)
        if grow:
            self.growing.add(r)
        else:
            self._check_protected(label, r, in_place)
        self._check_folders(label, r)
        if grow and r.exists() and earlier is None:
            self._check_grown(label, path, r)
        elif r.exists() and earlier is None:
            self._check_existing(label, path, r, in_place=in_place, keep=keep)
        self.targets[r] = (label, in_place)
        if parents:
            self.parents.add(r)
        return r

    def _read_only(self, label: str, path: Path | str, r: Path) -> bool:
        """Whether ``r`` is read-only; refused unless --force."""
        read_only = not os.access(r, os.W_OK) or not stat.S_IMODE(r.stat().st_mode) & stat.S_IWUSR
        if read_only and not self.force:
            raise InputError(f"{label} {path} is read-only; CiteFinder does not replace it unless you give "
                             "--force (nothing was written).")
        return bool(read_only)

    def _check_existing(self, label: str, path: Path | str, r: Path, *, in_place: bool, keep: bool) -> None:
        ours = written.is_ours(r, self.draft)
        if r.suffix.lower() == ".bib" and not ours and not in_place:
            raise _not_ours_bib(label, path)
        read_only = self._read_only(label, path, r)
        if not in_place and not ours and not self.force:
            raise InputError(f"{label} {path} exists and is not a file CiteFinder wrote for {self.of}; "
                             "choose another name, or give --force to replace it (nothing was written).")
        if in_place or keep or read_only or not ours:  # --force keeps what it replaces
            self.backups[r] = self._backup_name(r)

    def _check_grown(self, label: str, path: Path | str, r: Path) -> None:
        if written.record(r) is None:
            raise _not_ours_bib(label, path)
        read_only = self._read_only(label, path, r)
        try:
            self.grown[r] = r.read_bytes()
        except OSError as e:
            raise InputError(f"Cannot read {label} {path}: {e.strerror or e} (nothing was written).") from e
        if read_only or not written.is_ours(r, None):  # the user's edits: kept as FILE.bak too
            self.backups[r] = self._backup_name(r)

    def held(self, path: Path | str) -> str:
        """What a target planned to grow holds now, as text ("" when it is new); InputError when it is not UTF-8."""
        r = resolve(path)
        data = self.grown.get(r, b"")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            label = self.targets.get(r, ("",))[0]
            raise InputError(f"{label} {path} is not UTF-8 text (byte {e.start}); save it as UTF-8 and run again "
                             "(nothing was written).") from e

    def _backup_name(self, r: Path) -> Path:
        """The first free ``NAME.bak``, ``NAME.bak.1`` ...: not a file, nor an output or backup of this run."""
        name, n = r.with_name(r.name + ".bak"), 1
        while self._taken(name):
            name, n = r.with_name(f"{r.name}.bak.{n}"), n + 1
        return name

    def _taken(self, p: Path) -> bool:
        return p.exists() or p.is_symlink() or p in self.targets or p in self.backups.values()

    def target_folder(self, label: str, path: Path | str, *, ours: Callable[[Path], bool]) -> Path:
        """Check now that a folder may be written at ``path`` (a model, a new library): not a file, not
        holding or inside a protected file or folder, and new, empty, or a folder ``ours`` says CiteFinder
        made (replaced whole once the new one is complete); its resolved path."""
        r = resolve(path)
        if r.exists() and not r.is_dir():
            raise InputError(f"{label} {path} is a file, not a folder; give a new folder (nothing was written).")
        for what, p in self.protected:
            if _under(p, r):
                where = "is" if p == r else f"holds {p.name}, which is"
                raise InputError(f"{label} {path} {where} {what}; give a new folder (nothing was written).")
        for what, f, inside_ok in self.folders:
            if _under(f, r) or (_under(r, f) and not inside_ok):
                where = "is" if f == r else ("holds" if _under(f, r) else "is inside")
                raise InputError(f"{label} {path} {where} {what} {f}; give a new folder (nothing was written).")
        if r.is_dir() and any(r.iterdir()) and not ours(r):
            raise InputError(f"{label} {path} exists, is not empty and is not a folder CiteFinder made for this; "
                             "give a new folder (nothing was written).")
        return r

    def _check_protected(self, label: str, target: Path, in_place: bool) -> None:
        for what, p in self.protected:
            if _same(target, p) and not (in_place and target in self.editable and target == p):
                also = f"; {FORCE_NEVER}" if self.force else ""
                raise InputError(f"{label} {target} is {what}; it would be overwritten{also}. Choose another file "
                                 "name (nothing was written).")

    def _check_folders(self, label: str, target: Path) -> None:
        for what, folder, _ in self.folders:
            if _under(target, folder):
                also = " (--force never writes there)" if self.force else ""
                raise InputError(f"{label} {target} is inside {what} {folder}, which is read only{also}; choose a "
                                 "file outside it (nothing was written).")

    def put(self, path: Path | str, text: str | bytes, *, codec: str = "utf-8", bom: bytes = b"",
            cites: Sequence[written.Cite] = (), source: Path | None = None) -> None:
        """Queue ``text`` for a planned target (encoded in ``codec`` at :meth:`commit`); ``cites``: the cite
        commands CiteFinder put into it (remembered, so that learning does not take them for the user's);
        ``source``: the file whose encoding ``codec`` is (named when the text does not fit it)."""
        r = resolve(path)
        if r not in self.targets:
            raise ValueError(f"{path} was not planned (WritePlan.target first)")
        if r in self.grown and not (text if isinstance(text, bytes) else bom + text.encode(codec)).startswith(
                self.grown[r]):
            raise ValueError(f"{path} only grows: the text put there must begin with what it holds")
        self.puts.append(_Put(self.targets[r][0], r, text, codec, bom, tuple(cites), source))

    def commit(self) -> list[tuple[Path, Path | None]]:
        """Write every queued file and the record of them, all or nothing: (path, its backup or None) per
        file written."""
        encoded: list[tuple[_Put, bytes]] = []
        problems = []
        for put in self.puts:
            if isinstance(put.text, bytes):
                encoded.append((put, put.text))
                continue
            try:
                encoded.append((put, put.bom + put.text.encode(put.codec)))
            except UnicodeEncodeError as e:
                problems.append(unencodable(put.source or put.path, put.text, put.codec, e))
        if problems:
            raise InputError("; ".join(problems) + ". Nothing was written: use keys of plain letters and digits.")
        for path, held in self.grown.items():
            try:
                now = path.read_bytes() if path.exists() else b""
            except OSError:
                now = None
            if now != held:
                raise InputError(f"{path} changed while CiteFinder worked (nothing was written); run again to add "
                                 "to what it holds now.")
        steps = [staging.Step(put.path, data, self.backups.get(put.path), put.path in self.parents)
                 for put, data in encoded]
        notes = written.records((put.path, data, self.draft, put.cites) for put, data in encoded)
        steps += [staging.Step(path, data) for path, data in notes.items()]
        kept = staging.write_all(steps, taken=lambda p: p in self.targets)
        self.puts = []
        return [(put.path, kept.get(put.path)) for put, _ in encoded]


def _not_ours_bib(label: str, path: Path | str) -> InputError:
    return InputError(f"{label} {path} is a .bib CiteFinder did not write; it is never replaced, even with "
                      f"--force ({FORCE_NEVER}). Choose another file name (nothing was written).")
