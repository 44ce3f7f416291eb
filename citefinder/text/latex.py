"""LaTeX source read as LaTeX (pylatexenc), not with regular expressions: what is prose and what is
not (comments, verbatim-like environments, ``\\verb``, the preamble, ``\\iffalse`` blocks), where each
cite command and each of its keys is (optional arguments with nested braces, key lists spanning
lines with comments in them), which files the document includes and which .bib files it names.

Every position is a character offset into the text scanned, so a caller edits the source in place
and leaves every other byte as it was.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from citefinder.text.latexdb import (
    BIBLIOGRAPHY,
    CITE_COMMANDS,
    INCLUDES_ONE,
    INCLUDES_TWO,
    INLINE_VERBATIM,
    MULTI_CITE,
    NOT_CITED,
    VERBATIM_ENVIRONMENTS,
    input_name,
    latex_context,
    multi_cite_groups,
)

log = logging.getLogger(__name__)

__all__ = ["BIBLIOGRAPHY", "CITE_COMMANDS", "INCLUDES_ONE", "INCLUDES_TWO", "INLINE_VERBATIM", "MULTI_CITE",
           "NOT_CITED", "VERBATIM_ENVIRONMENTS", "Cite", "Include", "Key", "LatexScan", "is_placeholder_key",
           "parse_cite", "prose", "scan_latex"]

_PLACEHOLDER_KEY = re.compile(r"(?:\?+|TODO|TBD|XXX|CITATION|CITE|KEY)", re.IGNORECASE)


def is_placeholder_key(key: str) -> bool:
    """``?``, ``TODO``, ``XXX``, ... (and an empty key): "the reference goes here"."""
    return not key.strip() or bool(_PLACEHOLDER_KEY.fullmatch(key.strip()))


@dataclass(frozen=True)
class Key:
    """One key of a cite command's key list: its text and where it is (an empty key list is one empty key)."""

    text: str
    start: int
    end: int
    comma: int = -1  # the comma before this key (-1 for the first)

    @property
    def placeholder(self) -> bool:
        return is_placeholder_key(self.text)


@dataclass(frozen=True)
class Cite:
    """A cite command: ``\\citep[see][p.~3]{a, ?}`` from ``start`` to ``end``; ``command`` is ``\\citep``
    (with its star when given), ``keys`` its key list in order."""

    start: int
    end: int
    command: str
    keys: tuple[Key, ...]

    @property
    def placeholders(self) -> list[int]:
        """Positions of the placeholder keys (``{a, ?, TODO}`` -> ``[1, 2]``; ``{}`` -> ``[0]``)."""
        return [i for i, k in enumerate(self.keys) if k.placeholder]

    @property
    def cited(self) -> list[str]:
        """The real keys it cites, in order."""
        return [k.text for k in self.keys if not k.placeholder]


@dataclass(frozen=True)
class Include:
    """``\\input{intro}`` (or TeX's ``\\input intro``) and its kin: the command's span, the path as written (folder
    joined for ``\\import``) and the span of the file's own name argument (what a copy's name replaces)."""

    start: int
    end: int
    command: str
    path: str
    name_start: int = -1
    name_end: int = -1


@dataclass(frozen=True)
class LatexScan:
    """What :func:`scan_latex` found. ``skipped`` spans are not prose: no slot and no context there."""

    skipped: tuple[tuple[int, int], ...] = ()
    cites: tuple[Cite, ...] = ()
    includes: tuple[Include, ...] = ()
    bibliographies: tuple[str, ...] = ()
    body: tuple[int, int] | None = None  # between \begin{document} and \end{document}
    title: str = ""
    nocited: tuple[str, ...] = ()  # keys of \nocite (``*``: every entry)

    def is_skipped(self, pos: int) -> bool:
        return any(a <= pos < b for a, b in self.skipped)


@lru_cache(maxsize=16)
def scan_latex(text: str) -> LatexScan:
    """Read ``text`` as LaTeX; a parse that fails (pylatexenc on broken input) gives a scan of comments only.

    Cached (the app finds the slots of the same draft on every rerun; a scan is immutable)."""
    from pylatexenc import latexwalker

    try:
        walker = latexwalker.LatexWalker(text, latex_context=latex_context(), tolerant_parsing=True)
        nodes, _, _ = walker.get_latex_nodes()
    except Exception as e:  # noqa: BLE001 - a parser failure must not lose the draft: fall back to comments only
        log.warning("LaTeX could not be parsed (%s: %s); reading comments only", type(e).__name__, e)
        return LatexScan(skipped=tuple(_comment_spans(text)))
    found = _Found(text)
    found.walk(nodes)
    return found.result()


_COMMENT = re.compile(r"(?<!\\)%[^\n]*")


def _comment_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _COMMENT.finditer(text)]


class _Found:
    """What a walk over pylatexenc's nodes collects."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.skipped: list[tuple[int, int]] = []
        self.cites: list[Cite] = []
        self.includes: list[Include] = []
        self.bibliographies: list[str] = []
        self.body: tuple[int, int] | None = None
        self.title = ""
        self.nocited: list[str] = []

    def result(self) -> LatexScan:
        skipped = list(self.skipped)
        if self.body is not None:
            skipped += [(0, self.body[0]), (self.body[1], len(self.text))]
        return LatexScan(_merge(skipped), tuple(sorted(self.cites, key=lambda c: c.start)), tuple(self.includes),
                         tuple(self.bibliographies), self.body, self.title, tuple(self.nocited))

    def walk(self, nodes: Any) -> None:
        from pylatexenc import latexwalker as lw

        nodes = [n for n in nodes or () if n is not None]
        i = 0
        while i < len(nodes):
            n = nodes[i]
            if isinstance(n, lw.LatexMacroNode) and n.macroname == "iffalse":
                j = next((j for j in range(i + 1, len(nodes)) if isinstance(nodes[j], lw.LatexMacroNode)
                          and nodes[j].macroname == "fi"), None)
                end = nodes[j].pos + nodes[j].len if j is not None else nodes[-1].pos + nodes[-1].len
                self.skipped.append((n.pos, end))
                i = (j if j is not None else len(nodes) - 1) + 1
                continue
            self.node(n)
            i += 1

    def node(self, n: Any) -> None:
        from pylatexenc import latexwalker as lw

        if isinstance(n, lw.LatexCommentNode):
            self.skipped.append(self._comment(n))
        elif isinstance(n, lw.LatexEnvironmentNode):
            if n.environmentname in VERBATIM_ENVIRONMENTS:
                self.skipped.append((n.pos, n.pos + n.len))
                return
            if n.environmentname == "document" and self.body is None:
                start = self.text.find("}", n.pos) + 1
                close = "\\end{document}"
                end = n.pos + n.len - len(close) if self.text.startswith(close, n.pos + n.len - len(close)) else (
                    n.pos + n.len)
                self.body = (start, end)
            self.args(n)
            self.walk(n.nodelist)
        elif isinstance(n, lw.LatexMacroNode):
            self.macro(n)
        elif isinstance(n, (lw.LatexGroupNode, lw.LatexMathNode)):
            self.walk(n.nodelist)

    def _comment(self, n: Any) -> tuple[int, int]:
        """A comment from ``%`` to its line's end; a line holding only a comment goes with its line break."""
        start, end = n.pos, n.pos + 1 + len(n.comment)
        line_start = self.text.rfind("\n", 0, start) + 1
        if not self.text[line_start:start].strip():
            if self.text.startswith("\r\n", end):
                end += 2
            elif self.text.startswith("\n", end):
                end += 1
        return start, end

    def args(self, n: Any) -> None:
        argd = getattr(n, "nodeargd", None)
        if argd is not None and getattr(argd, "argnlist", None):
            self.walk(argd.argnlist)

    def macro(self, n: Any) -> None:
        name = n.macroname
        if name in INLINE_VERBATIM:
            self.skipped.append((n.pos, n.pos + n.len))
            return
        if name in ("url", "path"):
            return  # read as is: its % is no comment, and it holds no cite
        if name in MULTI_CITE:
            star = "*" if self.text.startswith("*", n.pos + 1 + len(name)) else ""
            keys = [k for a, b in multi_cite_groups(self.text, n.pos + 1 + len(name), n.pos + n.len)
                    for k in self._split(a, b)]
            if keys:
                self.cites.append(Cite(n.pos, n.pos + n.len, f"\\{name}{star}", tuple(keys)))
            return
        if name == "input":
            span = input_name(self.text, n.pos + len("\\input"), n.pos + n.len)
            if span is not None:
                self.includes.append(Include(n.pos, n.pos + n.len, name, self.text[span[0]:span[1]], *span))
            return
        groups = self._groups(n)
        if name in CITE_COMMANDS or name in NOT_CITED:
            if groups and name in CITE_COMMANDS:
                star = "*" if n.nodeargd.argnlist and n.nodeargd.argnlist[0] is not None else ""
                self.cites.append(Cite(n.pos, n.pos + n.len, f"\\{name}{star}", self._keys(groups[-1])))
            elif groups:
                self.nocited += [k.text for k in self._keys(groups[-1]) if k.text]
            return
        if name in INCLUDES_ONE and groups:
            a, b = self._stripped(groups[0])
            self.includes.append(Include(n.pos, n.pos + n.len, name, self.text[a:b], a, b))
            return
        if name in INCLUDES_TWO and len(groups) >= 2:
            folder, (a, b) = self._inner(groups[0]).strip(), self._stripped(groups[1])
            path = f"{folder.rstrip('/')}/{self.text[a:b]}" if folder else self.text[a:b]
            self.includes.append(Include(n.pos, n.pos + n.len, name, path, a, b))
            return
        if name in BIBLIOGRAPHY and groups:
            self.bibliographies += [b.strip() for b in self._inner(groups[-1]).split(",") if b.strip()]
            return
        if name == "title" and groups and not self.title:
            self.title = self._inner(groups[-1])
        self.args(n)

    def _groups(self, n: Any) -> list[Any]:
        """The macro's ``{...}`` arguments given in braces (``\\cite c`` has none: it is no cite command)."""
        from pylatexenc import latexwalker as lw

        argd = getattr(n, "nodeargd", None)
        args = getattr(argd, "argnlist", None) or []
        spec = getattr(argd, "argspec", "") or ""
        return [a for a, s in zip(args, spec, strict=False)
                if s == "{" and isinstance(a, lw.LatexGroupNode) and a.delimiters == ("{", "}")]

    def _inner(self, group: Any) -> str:
        return self.text[group.pos + 1 : group.pos + group.len - 1]

    def _stripped(self, group: Any) -> tuple[int, int]:
        """The span of a ``{...}`` argument's inside, spaces around it left out."""
        a, b = group.pos + 1, group.pos + group.len - 1
        while a < b and self.text[a].isspace():
            a += 1
        while b > a and self.text[b - 1].isspace():
            b -= 1
        return a, b

    def _split(self, start: int, end: int) -> list[Key]:
        """The keys of ``text[start:end]`` split at commas (a multi-cite's key list)."""
        keys, comma, at = [], -1, start
        for part in self.text[start:end].split(","):
            a = at + len(part) - len(part.lstrip())
            b = at + len(part.rstrip())
            keys.append(Key(self.text[a:b] if b > a else "", a, max(a, b), comma))
            comma = at + len(part)
            at = comma + 1
        return keys

    def _keys(self, group: Any) -> tuple[Key, ...]:
        """The keys of a ``{...}`` key list, split at commas outside comments, each with its span."""
        from pylatexenc import latexwalker as lw

        start, end = group.pos + 1, group.pos + group.len - 1
        comments = [self._comment(c) for c in group.nodelist or () if isinstance(c, lw.LatexCommentNode)]
        keys: list[Key] = []
        item: list[int] = []  # positions of the current key's characters
        comma = -1
        pos = start
        while pos <= end:
            inside = next((b for a, b in comments if a <= pos < b), None)
            if inside is not None:
                pos = inside
                continue
            if pos == end or self.text[pos] == ",":
                chars = [p for p in item if not self.text[p].isspace()]
                a, b = (chars[0], chars[-1] + 1) if chars else ((item[0], item[0]) if item else (pos, pos))
                keys.append(Key(self.text[a:b], a, b, comma))
                comma, item = pos, []
            else:
                item.append(pos)
            pos += 1
        return tuple(keys)


def _merge(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(s for s in spans if s[1] > s[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def parse_cite(text: str, start: int, end: int) -> Cite | None:
    """The cite command spanning ``text[start:end]`` (positions in ``text``), or None when it is not one."""
    scan = scan_latex(text[start:end])
    cite = next((c for c in scan.cites if c.start == 0 and c.end == end - start), None)
    if cite is None:
        return None
    keys = tuple(Key(k.text, k.start + start, k.end + start, k.comma + start if k.comma >= 0 else -1)
                 for k in cite.keys)
    return Cite(start, end, cite.command, keys)


def prose(text: str, scan: LatexScan | None = None) -> str:
    """The document's readable part: its title, then its body with comments, verbatim and the preamble left
    out (what a draft's topic is read from; never the ``\\documentclass`` and ``\\usepackage`` lines)."""
    scan = scan if scan is not None else scan_latex(text)
    out, pos = [], 0
    for a, b in scan.skipped:
        out.append(text[pos:a])
        pos = max(pos, b)
    out.append(text[pos:])
    body = "".join(out)
    return f"{scan.title}.\n\n{body}" if scan.title.strip() else body
