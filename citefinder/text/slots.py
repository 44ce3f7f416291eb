"""Find citation slots ([CITATION], [CITE], [?], \\cite{?}, \\citep{TODO} ...) in a draft and the context around each.

LaTeX drafts are read as LaTeX by a tokenizer (:mod:`citefinder.text.latex`): comments, verbatim-like
environments and the preamble are skipped, footnotes stay context, and a slot remembers the cite
command it was written with (``Slot.command``) so it is filled with the same one. Plain text (no LaTeX
structure) stays plain text, a stray ``\\cite{?}`` in it included.

Markers broken by PDF extraction (``[CITA-\\nTION]``, ``[CI TATION]``) are still found. Each
marker is masked before sentence splitting so that ``[?]`` never ends a sentence.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citefinder.text.latex import LatexScan, scan_latex
from citefinder.types import Slot

log = logging.getLogger(__name__)

SLOT_TEXT = "[CITATION]"
OTHER_TEXT = "[OTHER]"  # another slot's marker in a slot's ``focus`` sentence

_SEP = r"(?:-?\s*)"  # a hyphen, space or line break left inside a marker by PDF extraction


def _spread(word: str) -> str:
    return _SEP.join(word)


# A cite command of natbib/biblatex, its optional arguments, then its key list.
_CITE_COMMAND = (
    r"\\(?:cite(?:p|t|alp|alt|author|year|yearpar|num)?|autocite|parencite|textcite|footcite|smartcite|"
    r"supercite|fullcite)(?![a-zA-Z])\*?"
)
_CITE_OPTIONS = r"(?:\s*\[[^\[\]{}]*\]){0,2}\s*"
# A key that stands for "the reference goes here": ?, TODO, XXX, CITATION ... (or an empty key list).
_PLACEHOLDER_KEY = r"(?:\?+|TODO|TBD|XXX|CITATION|CITE|KEY)"
_PLACEHOLDER_KEY_RE = re.compile(_PLACEHOLDER_KEY, re.IGNORECASE)
# \cite{?}, \citep[see][]{?}, \cite{}, \autocite{TODO}, \citep{smith2020, ?}: a command whose key list
# holds at least one placeholder (each placeholder is a slot; real keys beside it are kept).
_CITE_PLACEHOLDER = (
    r"(?P<command>" + _CITE_COMMAND + r")" + _CITE_OPTIONS
    + r"\{(?P<keys>\s*|(?:[^{}]*,)?\s*" + _PLACEHOLDER_KEY + r"\s*(?:,[^{}]*)?)\}"
)

_PLAIN_MARKER = (
    r"\[\s*(?:" + _spread("CITATION") + r"(?:" + _SEP + r"S)?|" + _spread("CITE") + r"(?:" + _SEP + r"S)?|\?)\s*\]"
)
# every marker of a plain text (a LaTeX text's cite commands are read by citefinder.text.latex)
MARKER_RE = re.compile(_PLAIN_MARKER + r"|" + _CITE_PLACEHOLDER, re.IGNORECASE)
PLAIN_MARKER_RE = re.compile(_PLAIN_MARKER, re.IGNORECASE)

MIN_SENTENCE_WORDS = 4
_WORDS = re.compile(r"[A-Za-z]{2,}")
_FOOTNOTE = re.compile(r"\\footnote(?:\[[^\]]*\])?\s*\{")
_TIE = re.compile(r"(?<!\\)~")
_LATEX_HINT = re.compile(
    r"\\(?:documentclass|usepackage|begin\s*\{|(?:sub)*section\*?\s*\{|chapter\*?\s*\{|footnote\b|emph\s*\{|"
    r"textbf\s*\{|textit\s*\{|label\s*\{|(?:eq|auto|c)?ref\s*\{|input\s*\{|include\s*\{|item\b|maketitle\b)"
)

_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters: a masked marker is _OPEN <index> _CLOSE
_PLACEHOLDER = re.compile(_OPEN + r"(\d+)" + _CLOSE)
# Adjacent markers ("[CITATION][CITATION]", "[CITATION], [CITATION]") form one group.
_GROUP = re.compile(_OPEN + r"\d+" + _CLOSE + r"(?:\s*[,;]?\s*" + _OPEN + r"\d+" + _CLOSE + r")*")

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_HEADING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]|\\(?:sub)*section\*?\{|\\paragraph\*?\{|\\chapter\*?\{)")
_HEADING_TEXT = re.compile(
    r"^\s*(?:#{1,6}\s+(.*)|\\(?:sub)*(?:section|paragraph|chapter)\*?\{(.*?)\}?\s*$)", re.DOTALL
)
_CANDIDATE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+")
_SENTENCE_OPENERS = frozenset("\"'\u201c\u2018([\\" + _OPEN)
_ABBREVIATIONS = frozenset(
    "al fig figs eq eqs eqn sec secs tab tbl ref refs cf vs approx resp no nos vol pp ch chap "
    "dr mr mrs ms prof st jr sr def thm lem prop cor alg app appx ca viz".split()
)


@dataclass(frozen=True)
class Marker:
    """A marker in the text: ``[CITATION]`` (``command`` "") or a cite command, holding ``slots`` slots."""

    start: int
    end: int
    text: str
    command: str = ""
    slots: int = 1


def find_slots(text: str, context_sentences: int = 1, *, latex: bool | None = None) -> list[Slot]:
    """Every citation slot in ``text``, in order.

    ``sentence`` is the sentence holding the slot (every marker in it shown as ``[CITATION]``);
    ``context`` is that sentence plus ``context_sentences`` sentences on each side, with this slot
    written ``[CITATION]`` and all other markers removed. ``start``/``end`` span the original
    marker. Returns ``[]`` when there is none (the caller raises NoSlotsError).

    With ``latex`` (by default: when the text looks like LaTeX; a ``.tex`` file always is) the text is
    read by :mod:`citefinder.text.latex`: comments, verbatim-like environments, ``\\verb`` and the
    preamble are neither slots nor text, ``\\footnote{...}`` reads as a parenthesis of its sentence,
    ``~`` as a space, and each placeholder of a cite command (``\\citep{?, ?}``) is a slot whose
    ``command`` is ``\\citep``. Plain text is read as plain text: a ``%`` there is a percent sign.
    """
    if not text or not text.strip():
        return []
    if latex is None:
        latex = looks_like_latex(text)
    if latex:
        scan = scan_latex(text)
        markers = [Marker(c.start, c.end, text[c.start:c.end], c.command, len(c.placeholders))
                   for c in scan.cites if not scan.is_skipped(c.start)]  # a cite in a preamble macro is no slot
        markers += _plain_markers(text, scan)
        skipped = scan.skipped
    else:
        markers = [Marker(m.start(), m.end(), m.group(0), m.group("command") or "", _placeholders(m))
                   for m in MARKER_RE.finditer(text)]
        skipped = ()
    return slots_at(text, sorted((m for m in markers if m.slots), key=lambda m: m.start), skipped,
                    context_sentences, latex=latex)


def _plain_markers(text: str, scan: LatexScan) -> list[Marker]:
    """``[CITATION]``, ``[?]`` ... in a LaTeX text: outside comments, verbatim and cite commands."""
    taken = list(scan.skipped) + [(c.start, c.end) for c in scan.cites]
    return [Marker(m.start(), m.end(), m.group(0)) for m in PLAIN_MARKER_RE.finditer(text)
            if not _inside(m.start(), taken)]


def slots_at(text: str, markers: Sequence[Marker], skipped: Sequence[tuple[int, int]] = (),
             context_sentences: int = 1, *, latex: bool = False) -> list[Slot]:
    """The slots of ``markers`` (in text order) with their sentences and contexts; ``skipped`` spans are
    not text (comments, verbatim, preamble)."""
    if not markers:
        return []
    masked = _mask(text, markers, skipped).replace("\r", " ")
    if latex:
        masked = _TIE.sub(" ", _unwrap_footnotes(masked))
    sentences = split_sentences(masked)
    where: dict[int, int] = {}
    for j, sentence in enumerate(sentences):
        for m in _PLACEHOLDER.finditer(sentence):
            where[int(m.group(1))] = j
    k = max(0, context_sentences)
    headings = _headings(sentences)
    slots: list[Slot] = []
    for marker in markers:
        for _ in range(marker.slots):
            i = len(slots)
            j = where.get(i, 0)
            # a sentence that is little more than its markers ("[CITATION].") borrows the one before it
            back = k if len(_WORDS.findall(_PLACEHOLDER.sub(" ", sentences[j]))) >= MIN_SENTENCE_WORDS else max(k, 1)
            window = " ".join(sentences[max(0, j - back) : j + k + 1])
            slots.append(
                Slot(
                    index=i,
                    start=marker.start,
                    end=marker.end,
                    marker=marker.text,
                    sentence=_tidy(_PLACEHOLDER.sub(SLOT_TEXT, sentences[j])),
                    context=_render(window, keep=i),
                    focus=_render(sentences[j], keep=i, other=OTHER_TEXT),
                    heading=headings[j],
                    window=_render(" ".join(sentences[max(0, j - 1) : j + 2]), keep=i),
                    command=marker.command,
                )
            )
    log.debug("found %d citation slots", len(slots))
    return slots


def looks_like_latex(text: str) -> bool:
    """Whether ``text`` is LaTeX source (then ``%`` starts a comment): its structure says so
    (``\\section{``, ``\\begin{``, ``\\usepackage`` ...), not a stray ``\\cite{?}`` in plain text."""
    return bool(_LATEX_HINT.search(text))


def placeholder_keys(keys: str) -> list[int]:
    """Positions of the placeholder keys in a cite command's key list (``"a, ?, TODO"`` -> ``[1, 2]``);
    an empty list (``\\cite{}``) is one placeholder."""
    items = keys.split(",")
    if len(items) == 1 and not items[0].strip():
        return [0]
    return [i for i, item in enumerate(items) if _PLACEHOLDER_KEY_RE.fullmatch(item.strip())]


def _placeholders(m: re.Match) -> int:
    """How many slots a marker holds: one, or one per placeholder key of a cite command."""
    keys = m.group("keys")
    return 1 if keys is None else len(placeholder_keys(keys))


def _inside(pos: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _mask(text: str, markers: Sequence[Marker], skipped: Sequence[tuple[int, int]]) -> str:
    """``text`` with every marker replaced by its slots' placeholders and every skipped span removed."""
    edits: list[tuple[int, int, str]] = []
    i = 0
    for m in markers:
        edits.append((m.start, m.end, "".join(f"{_OPEN}{i + t}{_CLOSE}" for t in range(m.slots))))
        i += m.slots
    taken = [(a, b) for a, b, _ in edits]
    edits += [(a, b, "") for a, b in skipped if not any(a < y and x < b for x, y in taken)]
    out, pos = [], 0
    for a, b, repl in sorted(edits):
        if a < pos:
            continue
        out += [text[pos:a], repl]
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _unwrap_footnotes(text: str) -> str:
    """``x\\footnote{See y.}`` -> ``x (See y.)``: a footnote's text stays in its sentence's context."""
    while m := _FOOTNOTE.search(text):
        depth, end = 1, m.end()
        while end < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        body = text[m.end() : end - 1] if depth == 0 else text[m.end() :]
        text = f"{text[: m.start()]} ({body}){text[end:]}"
    return text


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, whitespace collapsed.

    Blank lines and headings always break; ``.``/``!``/``?`` break only before something that can
    start a sentence, and never after "e.g.", "i.e.", "et al.", "Fig.", an initial or a decimal point.
    """
    sentences: list[str] = []
    for paragraph in _blocks(text):
        flat = " ".join(paragraph.split())
        start = 0
        for m in _CANDIDATE_END.finditer(flat):
            if _is_boundary(flat, m):
                sentences.append(flat[start : m.end()].strip())
                start = m.end()
        if flat[start:].strip():
            sentences.append(flat[start:].strip())
    return [s for s in sentences if s]


def _blocks(text: str) -> list[str]:
    """Paragraphs (split at blank lines), with every heading line a block of its own."""
    blocks: list[str] = []
    for paragraph in _BLANK_LINE.split(text):
        current: list[str] = []
        for line in paragraph.split("\n"):
            if _HEADING.match(line):
                blocks += ["\n".join(current), line]
                current = []
            else:
                current.append(line)
        blocks.append("\n".join(current))
    return blocks


def _is_boundary(flat: str, m: re.Match) -> bool:
    nxt = flat[m.end() : m.end() + 1]
    if not nxt or not (nxt.isupper() or nxt.isdigit() or nxt in _SENTENCE_OPENERS):
        return False
    if not m.group(0).startswith("."):
        return True
    before = flat[: m.start()].rsplit(" ", 1)[-1].lstrip("([\"'")
    word = before.lower()
    if word in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)*[a-z]", word):
        return False  # "et al.", "Fig.", "e.g.", "i.e.", "U.S.", an initial "J."
    return True


def _headings(sentences: list[str]) -> list[str]:
    """For each sentence, the text of the nearest heading at or above it ("" before the first)."""
    out: list[str] = []
    current = ""
    for sentence in sentences:
        m = _HEADING_TEXT.match(sentence)
        if m:
            current = _tidy(_PLACEHOLDER.sub(" ", m.group(1) or m.group(2) or ""))
        out.append(current)
    return out


def _render(window: str, keep: int, other: str = "") -> str:
    """``window`` with slot ``keep`` as [CITATION] and every other marker group as ``other`` (default: removed)."""
    token = f"{_OPEN}{keep}{_CLOSE}"

    def group(m: re.Match) -> str:
        return f" {SLOT_TEXT} " if token in m.group(0) else f" {other} "

    return _tidy(_GROUP.sub(group, window))


def _tidy(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\s+([.,;:!?)])", r"\1", text)
    text = re.sub(r"([,;])(?=[.,;:!?])", "", text)
    text = re.sub(r"\(\s+", "(", text)
    return " ".join(text.split())
