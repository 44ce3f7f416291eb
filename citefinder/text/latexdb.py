"""pylatexenc's LaTeX context for :mod:`citefinder.text.latex`: the cite, include and bibliography
commands with their argument shapes, and readers that take ``\\url``/``\\href`` arguments, inline code
and verbatim-like environments as they are (a ``%`` there is no comment, a ``\\cite`` there no slot).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_CITE_BASE = (
    "cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum citetext autocite parencite "
    "textcite footcite footcitetext smartcite supercite fullcite footfullcite citetitle newcite shortcite citeA"
).split()
# biblatex's multi-cite commands: \cites(pre)(post)[pre][post]{a}[pre][post]{b}... (any number of key lists)
_MULTI_BASE = "cites parencites textcites autocites footcites footcitetexts smartcites supercites".split()
MULTI_CITE = frozenset(_MULTI_BASE + [c[0].upper() + c[1:] for c in _MULTI_BASE])
# natbib's and biblatex's capitalised forms (\Citet, \Textcite, ...) start a sentence
CITE_COMMANDS = frozenset(_CITE_BASE + [c[0].upper() + c[1:] for c in _CITE_BASE])
NOT_CITED = frozenset({"nocite"})  # parsed (its braces hold keys, not prose) but never a slot nor a citation
VERBATIM_ENVIRONMENTS = frozenset(
    "verbatim verbatim* Verbatim Verbatim* BVerbatim LVerbatim lstlisting minted comment filecontents "
    "filecontents*".split()
)
INLINE_VERBATIM = frozenset({"verb", "lstinline", "mintinline"})
# \input{f} \include{f} \subfile{f}; \import{dir}{f} and its kin take a folder first
INCLUDES_ONE = frozenset({"input", "include", "subfile"})
INCLUDES_TWO = frozenset({"import", "subimport", "inputfrom", "includefrom", "subinputfrom", "subincludefrom"})
BIBLIOGRAPHY = frozenset({"bibliography", "addbibresource", "addglobalbib", "nobibliography"})


def _context_db() -> Any:
    """pylatexenc's LaTeX context with the cite, include and verbatim commands this reader needs."""
    from pylatexenc import latexwalker
    from pylatexenc.macrospec import EnvironmentSpec, MacroSpec

    db = latexwalker.get_default_latex_context_db()
    macros = [MacroSpec(name, "*[[{") for name in sorted(CITE_COMMANDS | NOT_CITED)]
    macros += [MacroSpec(name, "{") for name in sorted(INCLUDES_ONE - {"input"})]
    macros += [MacroSpec("input", args_parser=_InputName())]
    macros += [MacroSpec(name, "*{{") for name in sorted(INCLUDES_TWO)]
    macros += [MacroSpec("bibliography", "{"), MacroSpec("nobibliography", "{"),
               MacroSpec("addbibresource", "[{"), MacroSpec("addglobalbib", "[{"), MacroSpec("title", "[{")]
    macros += [MacroSpec("url", args_parser=_VerbatimBraces(1)), MacroSpec("path", args_parser=_VerbatimBraces(1)),
               MacroSpec("href", args_parser=_VerbatimBraces(1)),
               MacroSpec("lstinline", args_parser=_InlineCode(0)), MacroSpec("mintinline", args_parser=_InlineCode(1))]
    macros += [MacroSpec(name, args_parser=_MultiCite()) for name in sorted(MULTI_CITE)]
    environments = [EnvironmentSpec(name, args_parser=_VerbatimEnvironment(name))
                    for name in sorted(VERBATIM_ENVIRONMENTS)]
    db.add_context_category("citefinder", prepend=True, macros=macros, environments=environments)
    return db


class _Verbatim:
    """Base of the argument readers below: they return pylatexenc's verbatim arguments."""

    def __init__(self) -> None:
        self.argspec = "{"

    @staticmethod
    def _node(w: Any, parsing_state: Any, start: int, end: int) -> Any:
        from pylatexenc import latexwalker
        from pylatexenc.macrospec import ParsedVerbatimArgs

        chars = w.make_node(latexwalker.LatexCharsNode, parsing_state=parsing_state, chars=w.s[start:end],
                            pos=start, len=end - start)
        return ParsedVerbatimArgs(verbatim_chars_node=chars)


def _brace_end(s: str, pos: int) -> int:
    """Index after the ``}`` closing the ``{`` at ``pos`` (braces counted, nothing else), or len(s)."""
    depth = 0
    for i in range(pos, len(s)):
        if s[i] == "{" and (i == 0 or s[i - 1] != "\\"):
            depth += 1
        elif s[i] == "}" and s[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(s)


def _skip_space(s: str, pos: int) -> int:
    while pos < len(s) and s[pos] in " \t":
        pos += 1
    return pos


class _VerbatimBraces(_Verbatim):
    """``\\url{http://x/a%20b}``: the first ``n`` brace groups are read as they are (a % is no comment)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> tuple[Any, int, int]:
        start = end = pos
        for _ in range(self.n):
            at = _skip_space(w.s, end)
            if at >= len(w.s) or w.s[at] != "{":
                break
            end = _brace_end(w.s, at)
        return self._node(w, parsing_state, start, end), pos, end - pos


class _InlineCode(_Verbatim):
    """``\\lstinline|x|``, ``\\lstinline[opts]{x}``, ``\\mintinline{lang}{x}``: code, not prose."""

    def __init__(self, braces_before: int) -> None:
        super().__init__()
        self.braces_before = braces_before

    def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> tuple[Any, int, int]:
        s, at = w.s, _skip_space(w.s, pos)
        if at < len(s) and s[at] == "[":
            close = s.find("]", at)
            at = _skip_space(s, close + 1 if close >= 0 else len(s))
        for _ in range(self.braces_before):
            if at < len(s) and s[at] == "{":
                at = _skip_space(s, _brace_end(s, at))
        if at >= len(s):
            end = at
        elif s[at] == "{":
            end = _brace_end(s, at)
        else:
            close = s.find(s[at], at + 1)
            end = close + 1 if close >= 0 else len(s)
        return self._node(w, parsing_state, pos, end), pos, end - pos


def _close(s: str, pos: int, closer: str) -> int:
    """Index after the ``closer`` ending the bracket at ``pos`` (no nesting), or len(s)."""
    end = s.find(closer, pos + 1)
    return len(s) if end < 0 else end + 1


def multi_cite_groups(s: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``{...}`` key lists of a multi-cite command's arguments in ``s[start:end]``: (first, last) of each
    list's inside, the ``(...)`` and ``[...]`` notes skipped."""
    groups, at = [], start
    while at < end:
        at = _skip_space(s, at)
        if at >= end:
            break
        if s[at] in "([":
            at = _close(s, at, ")" if s[at] == "(" else "]")
        elif s[at] == "{":
            close = _brace_end(s, at)
            groups.append((at + 1, close - 1))
            at = close
        else:
            break
    return groups


def input_name(s: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of the file name in ``s[start:end]``, the argument of ``\\input``: ``{sections/intro}`` (inside
    the braces, spaces stripped), ``"my file"`` (inside the quotes) or TeX's own brace-less ``sections/intro``
    (to the first space, line end, brace, ``%`` or backslash). None when there is no name."""
    a, b = _input_arg(s, start, end)[1]
    while a < b and s[a].isspace():
        a += 1
    while b > a and s[b - 1].isspace():
        b -= 1
    return (a, b) if b > a else None


_NAME_STOPS = frozenset("{}%\\$")


def _input_arg(s: str, start: int, end: int) -> tuple[int, tuple[int, int]]:
    """(where ``\\input``'s argument starting at ``start`` ends, the span of the name inside it)."""
    at = _skip_space(s, start)
    if at < end and s[at] == "{":
        close = min(_brace_end(s, at), end)
        return close, (at + 1, max(at + 1, close - 1))
    if at < end and s[at] == '"':
        close = s.find('"', at + 1, end)
        return (close + 1, (at + 1, close)) if close >= 0 else (end, (at + 1, end))
    stop = at
    while stop < end and not s[stop].isspace() and s[stop] not in _NAME_STOPS:
        stop += 1
    return stop, (at, stop)


class _InputName(_Verbatim):
    """``\\input{file}`` and TeX's brace-less ``\\input file`` (LaTeX hands a name without braces to TeX's
    primitive, which reads it to the first space): the argument is read as it is, without the spaces after it."""

    def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> tuple[Any, int, int]:
        end = _input_arg(w.s, pos, len(w.s))[0]
        return self._node(w, parsing_state, pos, end), pos, end - pos


class _MultiCite(_Verbatim):
    r"""``\cites(pre)(post)[p][q]{a}[r]{b,c}``: every note and key list, read to the last key list."""

    def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> tuple[Any, int, int]:
        s, at, end = w.s, pos, pos
        if at < len(s) and s[at] == "*":
            at += 1
            end = at
        while True:
            at = _skip_space(s, at)
            if at >= len(s) or s[at] not in "([{":
                break
            if s[at] == "{":
                at = end = _brace_end(s, at)
            else:
                at = _close(s, at, ")" if s[at] == "(" else "]")
        return self._node(w, parsing_state, pos, end), pos, end - pos


class _VerbatimEnvironment(_Verbatim):
    """``\\begin{lstlisting} ... \\end{lstlisting}`` (and ``comment``, ``minted``, ...): read to its end as is."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.end_text = "\\end{" + name + "}"

    def parse_args(self, w: Any, pos: int, parsing_state: Any = None) -> tuple[Any, int, int]:
        end = w.s.find(self.end_text, pos)
        end = len(w.s) if end < 0 else end  # an environment never closed runs to the end, as in LaTeX
        return self._node(w, parsing_state, pos, end), pos, end - pos


@lru_cache(maxsize=1)
def latex_context() -> Any:
    """The context (built once)."""
    return _context_db()
