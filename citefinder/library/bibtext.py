"""Text as a BibTeX field holds it, read right by BibTeX and by pdflatex without any package (issue 51).

The writer's choice: the output is ASCII wherever LaTeX has a command for a character. An accented letter is
BibTeX's *special character* (``M{\\"u}ller``, ``{\\'E}mile``: one letter to BibTeX when it abbreviates a given
name, sorts, or changes case); a Greek letter or mathematical symbol is math (``α`` -> ``$\\alpha$``; pdflatex
with inputenc rejects a bare ``α``); a character LaTeX has no command for (CJK) is kept as UTF-8.

What a record already writes as LaTeX is kept where it is safe to keep:

- ``$...$`` math (opening ``$`` before a non-space, closing ``$`` after one, pandoc's rule, so "$5 and $10"
  stays text): kept as math, unless it holds a command that reads or writes files or defines macros;
- balanced braces (``{BERT}``): kept, as case protection; an unmatched brace is a literal one;
- LaTeX's escapes (``\\&``, ``\\%``) and accents (``\\"o``, ``\\'{e}``): read as the character they stand for.

Everything else is text: ``& % $ # _ ~ ^ \\`` are escaped, and ``--`` stays two hyphens.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["escape_latex", "latex_text", "latex_title", "name_text"]

_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\textbraceleft{}", "}": r"\textbraceright{}", "~": r"\textasciitilde{}",
             "^": r"\textasciicircum{}"}
_ESCAPED = set("&%$#_{}")  # \& \% ... in a record: the character itself
_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
            ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
            "r": "\u030a"}
_ACCENT = re.compile(r"""\\(['`^"~=.])\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))"""
                     r"""|\\([uvHckr])(?:\{\s*([A-Za-z])\s*\}|\s+([A-Za-z]))""")
# TeX's own ligatures for the punctuation a title has most.
_PUNCTUATION = {"\u2013": "--", "\u2014": "---", "\u2018": "`", "\u2019": "'", "\u201c": "``", "\u201d": "''",
                "\u00a0": "~"}
# Commands never kept in math: they read or write files, run code or define macros.
_UNSAFE = re.compile(r"\\(?:input|include|openin|openout|read|write|immediate|special|directlua|def|edef|gdef|xdef|"
                     r"let|catcode|csname|expandafter|newcommand|renewcommand|providecommand|usepackage|"
                     r"makeatletter|loop|jobname)\b|@|(?<!\\)[%#&]")


@lru_cache(maxsize=1)
def _encoder():
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    return UnicodeToLatexEncoder(non_ascii_only=True, unknown_char_policy="keep",
                                 replacement_latex_protection="none")


@lru_cache(maxsize=4096)
def _char(c: str) -> tuple[str, bool]:
    """A non-ASCII character as LaTeX, and whether that is math (``("\\alpha", True)``); kept when LaTeX has
    no command for it."""
    if c in _PUNCTUATION:
        return _PUNCTUATION[c], False
    import logging

    logging.getLogger("pylatexenc.latexencode._unicode_to_latex_encoder").setLevel(logging.ERROR)
    out = _encoder().unicode_to_latex(c)
    if out == c:
        return c, False
    if out.startswith("\\ensuremath{") and out.endswith("}"):
        return out[len("\\ensuremath{"):-1], True
    return "{" + out + "}", False  # BibTeX's special character: {\"u}, {\ss}, {\textdagger}


@dataclass
class _Out:
    """Rendered LaTeX, built piece by piece: text, and runs of math characters merged into one ``$...$``."""

    parts: list[str]
    math: list[str]
    hyphen: bool = False

    def text(self, s: str) -> None:
        self.flush()
        if s == "-" and self.hyphen:
            s = "{}-"  # "--" stays two hyphens, never a dash
        self.hyphen = s.endswith("-")
        self.parts.append(s)

    def symbol(self, latex: str) -> None:
        self.math.append(latex)

    def flush(self) -> None:
        if self.math:
            self.parts.append("$" + " ".join(self.math) + "$")
            self.math.clear()
            self.hyphen = False

    def done(self) -> str:
        self.flush()
        return "".join(self.parts)


@dataclass(frozen=True)
class _Piece:
    """One piece of a word: its LaTeX, its plain letters (for case protection), and what it is."""

    latex: str
    plain: str
    kind: str  # "text", "symbol" (a character that is math: \\alpha), "math" or "group"


def _char_piece(c: str) -> _Piece:
    """One character of text as a piece: a special escaped, a letter LaTeX has a command for as that command."""
    if c in _SPECIALS:
        return _Piece(_SPECIALS[c], c, "text")
    if c.isascii():
        return _Piece(c, c, "text")
    latex, math = _char(c)
    return _Piece(latex, c, "symbol" if math else "text")


def _math(text: str, i: int) -> int:
    """The index of the ``$`` closing math opened at ``text[i]``, or -1 when ``text[i]`` opens none: the next
    unescaped ``$`` closes it when it follows a non-space and no digit follows it (pandoc's rule: "$5 and $10"
    is text), and what lies between is safe math."""
    if i + 1 >= len(text) or text[i + 1] in " $":
        return -1
    j = i + 1
    while (j := text.find("$", j)) > 0 and text[j - 1] == "\\":
        j += 1
    if j < 0 or text[j - 1] == " " or (j + 1 < len(text) and text[j + 1].isdigit()):
        return -1
    body = text[i + 1:j]
    return j if _balanced(body) and not _UNSAFE.search(body) else -1


def _balanced(text: str) -> bool:
    depth = 0
    for i, c in enumerate(text):
        if c in "{}" and i and text[i - 1] == "\\":
            continue
        depth += 1 if c == "{" else -1 if c == "}" else 0
        if depth < 0:
            return False
    return depth == 0


def _closing(text: str, i: int) -> int:
    """The index of the ``}`` matching the ``{`` at ``text[i]``, or -1."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "{}" and j > i and text[j - 1] == "\\":
            continue
        depth += 1 if c == "{" else -1 if c == "}" else 0
        if depth == 0:
            return j
    return -1


def _math_body(body: str) -> str:
    out = []
    for c in body:
        if c.isascii():
            out.append(c)
        else:
            latex, math = _char(c)
            out.append("{" + latex + "}" if math else latex)
    return "".join(out)


def _decode_accents(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        accent = m.group(1) or m.group(4)
        letter = next(g for g in (m.group(2), m.group(3), m.group(5), m.group(6)) if g)
        return unicodedata.normalize("NFC", letter + _ACCENTS[accent])

    return _ACCENT.sub(one, text) if "\\" in text else text


MAX_DEPTH = 16  # braces nested deeper are literal braces (a hostile record must not exhaust the stack)


def _pieces(text: str, depth: int = 0) -> list[_Piece]:
    """``text`` read as pieces: math, brace groups and characters (spaces are pieces too)."""
    pieces: list[_Piece] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPED:
            c, i = text[i + 1], i + 1  # \& is the character &
        elif c == "$" and (j := _math(text, i)) > 0:
            pieces.append(_Piece("$" + _math_body(text[i + 1:j]) + "$", "", "math"))
            i = j + 1
            continue
        elif c == "{" and depth < MAX_DEPTH and (j := _closing(text, i)) > 0:
            inner = _render(_pieces(text[i + 1:j], depth + 1))
            pieces.append(_Piece("{" + inner + "}", "", "group"))
            i = j + 1
            continue
        pieces.append(_char_piece(c))
        i += 1
    return pieces


def _render(pieces: list[_Piece]) -> str:
    """Pieces joined: runs of math symbols merged into one ``$...$``, "--" kept two hyphens."""
    out = _Out([], [])
    for p in pieces:
        if p.kind == "symbol":
            out.symbol(p.latex)  # a Greek letter or symbol: one $...$ with its neighbours
        else:
            out.text(p.latex)
    return out.done()


def latex_text(text: str) -> str:
    """``text`` as BibTeX field text: math and balanced braces kept, specials escaped, non-ASCII as LaTeX."""
    return _render(_pieces(unicodedata.normalize("NFC", _decode_accents(text))))


def escape_latex(text: str) -> str:
    """``text`` as literal text: every LaTeX special (``& % $ # _ { } ~ ^ \\``) escaped, non-ASCII as LaTeX,
    ``--`` kept from becoming a dash."""
    return _render([_char_piece(c) for c in unicodedata.normalize("NFC", text)])


def name_text(name: str) -> str:
    """A person's name as BibTeX field text (accents as special characters)."""
    return latex_text(name)


def latex_title(title: str) -> str:
    """A title as BibTeX field text (:func:`latex_text`), with the words whose capitals must survive a
    lower-casing style braced: words with a capital after their first letter (BERT, NeurIPS, GPT-2) anywhere,
    and capitalised words after the first in a sentence-case title (there the capital marks a name). Title-case
    titles keep their other words unbraced so the bibliography style decides; a word the record braced
    already (``{BERT}``) or math is left as it is."""
    pieces = _pieces(unicodedata.normalize("NFC", _decode_accents(" ".join(title.split()))))
    words: list[list[_Piece]] = [[]]
    for p in pieces:
        if p.kind == "text" and p.plain == " ":
            words.append([])
        else:
            words[-1].append(p)
    plains = ["".join(p.plain for p in w) for w in words]
    letters = [w for w in plains[1:] if len(re.sub(r"\W", "", w)) > 3]
    title_case = bool(letters) and sum(w[:1].isupper() for w in letters) * 2 > len(letters)
    out = []
    for i, (word, plain) in enumerate(zip(words, plains, strict=True)):
        core = plain.strip(string.punctuation)
        inner_caps = any(c.isupper() for c in core[1:])
        name_like = i > 0 and not title_case and core[:1].isupper()
        braced = any(p.kind == "group" for p in word)
        if core and (inner_caps or name_like) and not braced:
            lead = next((k for k, p in enumerate(word) if p.kind != "text" or p.plain not in string.punctuation),
                        len(word))
            tail = next((k for k in range(len(word), 0, -1) if word[k - 1].kind != "text"
                         or word[k - 1].plain not in string.punctuation), lead)
            out.append(_render(word[:lead]) + "{" + _render(word[lead:tail]) + "}" + _render(word[tail:]))
        else:
            out.append(_render(word))
    return " ".join(out)
