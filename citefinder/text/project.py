"""A LaTeX project read whole: the main file with every ``\\input``/``\\include``/``\\subfile``/``\\import``
inlined where LaTeX reads it (commented-out ones skipped; TeX's brace-less ``\\input file`` too), the .bib files
it names, and the way back from a position in the whole to a file and a position in it, so that each file is
written back in its own encoding and line endings with only its placeholders changed. Each file is named by its
path from the main file's folder (two ``intro.tex`` in two folders are told apart).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from citefinder.errors import InputError
from citefinder.text.decode import binary_kind, decode_keeping_encoding
from citefinder.text.encodings import unencodable
from citefinder.text.fill import SlotKeys, fill_draft
from citefinder.text.latex import Include, LatexScan, scan_latex
from citefinder.types import Slot

log = logging.getLogger(__name__)

MAX_FILES = 500
MAX_FILE_BYTES = 20 * 1024 * 1024
# \input and \include name a path from the main file's folder (where LaTeX runs); \subfile and \subimport
# from the including file's folder; \import{dir}{file} from the main file's folder.
_FROM_INCLUDING = frozenset({"subfile", "subimport", "subinputfrom", "subincludefrom"})


@dataclass(frozen=True)
class SourceFile:
    """One file of a project as read: its text and what writes it back byte for byte."""

    path: Path
    text: str
    encoding: str
    bom: bytes = b""

    def encode(self, text: str) -> bytes:
        """``text`` in this file's encoding (a key the encoding cannot write is an InputError)."""
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as e:
            original = self.text.encode(self.encoding, "replace")  # the file as read: which bytes it holds
            raise InputError(f"{unencodable(self.path, text, self.encoding, e, original)}; use keys of plain "
                             "letters and digits.") from e


@dataclass(frozen=True)
class Segment:
    """``text[start:end]`` of the project is ``files[file].text[offset:offset + end - start]``."""

    start: int
    end: int
    file: int
    offset: int


@dataclass(frozen=True)
class Project:
    """The document as LaTeX reads it (``text``) and the files it came from."""

    files: tuple[SourceFile, ...]
    text: str
    segments: tuple[Segment, ...]
    missing: tuple[str, ...] = ()  # included files that could not be read, with why
    bibliographies: tuple[Path, ...] = ()  # the .bib files \bibliography / \addbibresource name
    latex: bool = True

    @property
    def main(self) -> Path:
        return self.files[0].path

    def locate(self, pos: int) -> tuple[int, int]:
        """(file index, position in that file) of ``pos`` in :attr:`text`."""
        for seg in self.segments:
            if seg.start <= pos < seg.end or (pos == seg.end and seg is self.segments[-1]):
                return seg.file, seg.offset + pos - seg.start
        raise ValueError(f"position {pos} is in no file")

    def name_of(self, path: Path) -> str:
        """``path`` as the project names it: from the main file's folder (``sections/intro.tex``)."""
        return os.path.relpath(path, self.main.parent).replace(os.sep, "/")

    def includes_of(self, file: int, text: str | None = None) -> list[tuple[Include, Path]]:
        """Each include LaTeX reads in file ``file`` (or in ``text``, that file's text as changed) with the file it
        names, resolved as :func:`read_project` resolves it (those naming no file left out)."""
        here = self.files[file].path.parent
        out = []
        for inc in followed_includes(scan_latex(self.files[file].text if text is None else text)):
            target = resolve_include(inc.path, here, self.main.parent, inc.command)
            if target is not None:
                out.append((inc, target))
        return out

    def line(self, pos: int) -> tuple[Path, int]:
        """The file and 1-based line of ``pos`` in :attr:`text`."""
        i, at = self.locate(pos)
        return self.files[i].path, self.files[i].text.count("\n", 0, at) + 1

    def file_slots(self, slots: Sequence[Slot]) -> dict[int, list[Slot]]:
        """The slots of each file, with their spans in that file's own text."""
        out: dict[int, list[Slot]] = {}
        for slot in slots:
            i, at = self.locate(slot.start)
            out.setdefault(i, []).append(replace(slot, start=at, end=at + slot.end - slot.start))
        return out

    def fill(self, slots: Sequence[Slot], keys: SlotKeys, *, command: str = "\\cite") -> dict[int, str]:
        """file index -> that file's text with its slots filled, for every file that changed."""
        out = {}
        for i, own in self.file_slots(slots).items():
            filled = fill_draft(self.files[i].text, own, keys, command=command)
            if filled != self.files[i].text:
                out[i] = filled
        return out


def read_source(path: Path) -> SourceFile:
    """A text file of the project, decoded (InputError when it cannot be read or is not text)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path.name} is {size / 2**20:.0f} MB, larger than a LaTeX file can be here.")
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"Cannot read {path}: {e.strerror or e}") from e
    kind = binary_kind(data[:65536])
    if kind:
        raise InputError(f"{path.name} is {kind}, not a LaTeX or text file.")
    text, encoding, bom = decode_keeping_encoding(data)
    return SourceFile(path, text, encoding, bom)


def read_project(main: Path, *, latex: bool | None = None) -> Project:
    """``main`` and the files it includes, inlined. ``latex`` defaults to: the file is ``.tex``; a
    text file that is not LaTeX is a project of one file."""
    main = main.expanduser().resolve()
    first = read_source(main)
    if latex is None:
        latex = main.suffix.lower() in (".tex", ".ltx", ".latex")
    if not latex:
        return Project((first,), first.text, (Segment(0, len(first.text), 0, 0),), latex=False)
    reader = _Reader(main)
    reader.add(first)
    reader.inline(0, 0, len(first.text), depth=0)
    text = "".join(reader.pieces)
    return Project(tuple(reader.files), text, tuple(reader.segments), tuple(reader.missing),
                   tuple(reader.bibliographies), latex=True)


class _Reader:
    def __init__(self, main: Path) -> None:
        self.root = main.parent
        self.files: list[SourceFile] = []
        self.pieces: list[str] = []
        self.segments: list[Segment] = []
        self.missing: list[str] = []
        self.bibliographies: list[Path] = []
        self.length = 0

    def add(self, source: SourceFile) -> int:
        self.files.append(source)
        return len(self.files) - 1

    def emit(self, file: int, start: int, end: int) -> None:
        if end > start:
            self.pieces.append(self.files[file].text[start:end])
            self.segments.append(Segment(self.length, self.length + end - start, file, start))
            self.length += end - start

    def inline(self, file: int, start: int, end: int, depth: int) -> None:
        """Emit ``files[file].text[start:end]`` with every include in it replaced by the included file."""
        source = self.files[file]
        scan = scan_latex(source.text)
        for bib in scan.bibliographies:
            path = self.root / bib
            path = path if path.suffix.lower() == ".bib" else path.with_name(path.name + ".bib")
            if path.resolve() not in self.bibliographies:
                self.bibliographies.append(path.resolve())
        pos = start
        name = self._name(source.path)
        for inc in followed_includes(scan):
            if inc.start < start or inc.end > end:
                continue
            target = resolve_include(inc.path, source.path.parent, self.root, inc.command)
            if target is None:
                self.missing.append(f"{name}: \\{inc.command}{{{inc.path}}}: no such file")
                continue
            if any(f.path == target for f in self.files) or depth >= 20 or len(self.files) >= MAX_FILES:
                self.missing.append(f"{name}: \\{inc.command}{{{inc.path}}}: included again (a loop?); read once")
                continue
            try:
                child = self.add(read_source(target))
            except InputError as e:
                self.missing.append(f"{name}: \\{inc.command}{{{inc.path}}}: {e}")
                continue
            self.emit(file, pos, inc.start)
            text = self.files[child].text
            body = scan_latex(text).body if inc.command == "subfile" else None
            a, b = body if body is not None else (0, len(text))
            self.inline(child, a, b, depth + 1)
            pos = inc.end
        self.emit(file, pos, end)

    def _name(self, path: Path) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def resolve_include(name: str, here: Path, root: Path, command: str) -> Path | None:
    """The file an include names, as LaTeX finds it: from the main file's folder ``root`` (or from the including
    file's folder ``here``, for \\subfile and \\subimport; the other is tried next), ``.tex`` added when it has
    no such file."""
    bases = [here, root] if command in _FROM_INCLUDING else [root, here]
    for base in dict.fromkeys(bases):
        for candidate in (base / name, base / f"{name}.tex"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def followed_includes(scan: LatexScan) -> list[Include]:
    """The includes LaTeX reads: not in a comment, verbatim or ``\\iffalse`` block; one in the preamble is read
    (it may name the .bib), though the preamble is not prose."""
    return [inc for inc in scan.includes if not scan.is_skipped(inc.start) or _in_preamble(scan, inc.start)]


def _in_preamble(scan: LatexScan, pos: int) -> bool:
    return scan.body is not None and pos < scan.body[0]


_BIB_COMMAND = re.compile(r"\\(bibliography|addbibresource|addglobalbib|nobibliography)\s*(\[[^\]]*\]\s*)?\{([^}]*)\}")


def copies_in(project: Project, out_dir: Path, changed: Mapping[int, str], main_copy: Path,
              beside: Callable[[int], Path]) -> dict[int, tuple[Path, str]]:
    """What to write when the main file's copy goes to ``main_copy`` in ``out_dir``, a folder other than the main
    file's (``fill main.tex -o ../out/main.tex``), as file index -> (path, text): the copy compiles where it is
    written. Every file of the project inside the main file's folder is copied into ``out_dir`` at its path from
    the main file (``sections/a.tex`` -> ``out_dir/sections/a.tex``: each ``\\input``, ``\\include``,
    ``\\subfile`` and ``\\import`` resolves there as it did), its text as ``changed`` or as read; a file outside
    that folder stays where it is (copied by ``beside(i)`` when it changed) and each include of it names it by its
    path from where LaTeX resolves it; each ``\\bibliography``/``\\addbibresource`` names the .bib the project
    reads by its path from ``out_dir`` (a .bib is read where it is, never copied)."""
    root = project.main.parent
    paths: dict[int, Path] = {0: main_copy}
    for i, f in enumerate(project.files[1:], 1):
        rel = os.path.relpath(f.path, root)
        inside = not rel.startswith(os.pardir + os.sep) and rel != os.pardir and not os.path.isabs(rel)
        if inside:
            paths[i] = out_dir / rel
        elif i in changed:
            paths[i] = beside(i)
    where = {project.files[i].path: p for i, p in paths.items() if i}
    out = {}
    for i, path in sorted(paths.items()):
        text = changed.get(i, project.files[i].text)
        text = _point_outside(project, i, text, where, out_dir, path.parent)
        out[i] = (path, _point_bibliographies(text, root, out_dir))
    return out


def _point_outside(project: Project, file: int, text: str, where: Mapping[Path, Path], out_dir: Path,
                   here: Path) -> str:
    """``text`` with each include of a file outside the main file's folder naming it (or its copy) by its path from
    where LaTeX resolves it now: ``out_dir`` (``\\input``, ``\\include``) or the copy's own folder (``\\subfile``).
    The two-argument ``\\import`` family keeps its folder argument: left as written."""
    root = project.main.parent
    edits = []
    for inc, target in project.includes_of(file, text):
        if inc.name_start < 0 or inc.command not in ("input", "include", "subfile"):
            continue
        if os.path.relpath(target, root).startswith(os.pardir):
            dest = where.get(target, target)
            base = here if inc.command in _FROM_INCLUDING else out_dir
            name = os.path.relpath(dest, base).replace(os.sep, "/")
            written = text[inc.name_start:inc.name_end]
            edits.append((inc.name_start, inc.name_end, name if written.lower().endswith(".tex")
                          else name.removesuffix(".tex")))
    return apply_edits(text, edits)


def _point_bibliographies(text: str, root: Path, out_dir: Path) -> str:
    """``text`` with each .bib name of a bibliography command (not in a comment) as its path from ``out_dir``."""
    scan = scan_latex(text)
    edits = []
    for m in _BIB_COMMAND.finditer(text):
        if scan.is_skipped(m.start()):
            continue
        names = []
        for name in m.group(3).split(","):
            bare = name.strip()
            if not bare:
                continue
            moved = os.path.relpath(os.path.realpath(root / bare), os.path.realpath(out_dir)).replace(os.sep, "/")
            names.append(moved)
        edits.append((m.start(3), m.end(3), ",".join(names)))
    return apply_edits(text, edits)


def apply_edits(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span replaced by ``new`` (the spans do not overlap)."""
    out, pos = [], 0
    for start, end, new in sorted(edits):
        out += [text[pos:start], new]
        pos = end
    out.append(text[pos:])
    return "".join(out)
