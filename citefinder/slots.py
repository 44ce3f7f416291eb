"""Find citation slots ([CITATION], [CITE], [?], \\cite{?} ...) in a draft and the context around each.

Markers broken by PDF extraction (``[CITA-\\nTION]``, ``[CI TATION]``) are still found. Each
marker is masked before sentence splitting so that ``[?]`` never ends a sentence.
"""

from __future__ import annotations

import logging
import re

from citefinder.types import Slot

log = logging.getLogger(__name__)

SLOT_TEXT = "[CITATION]"
OTHER_TEXT = "[OTHER]"  # another slot's marker in a slot's ``focus`` sentence

_SEP = r"(?:-?\s*)"  # a hyphen, space or line break left inside a marker by PDF extraction


def _spread(word: str) -> str:
    return _SEP.join(word)


MARKER_RE = re.compile(
    r"\[\s*(?:" + _spread("CITATION") + r"(?:" + _SEP + r"S)?|" + _spread("CITE") + r"(?:" + _SEP + r"S)?|\?)\s*\]"
    r"|\\cite[pt]?\s*\{\s*\?\s*\}",
    re.IGNORECASE,
)

MIN_SENTENCE_WORDS = 4
_WORDS = re.compile(r"[A-Za-z]{2,}")
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


def find_slots(text: str, context_sentences: int = 1) -> list[Slot]:
    """Every citation slot in ``text``, in order.

    ``sentence`` is the sentence holding the slot (every marker in it shown as ``[CITATION]``);
    ``context`` is that sentence plus ``context_sentences`` sentences on each side, with this slot
    written ``[CITATION]`` and all other markers removed. ``start``/``end`` span the original
    marker. Returns ``[]`` when there is none (the caller raises NoSlotsError).
    """
    if not text or not text.strip():
        return []
    matches = list(MARKER_RE.finditer(text))
    if not matches:
        return []
    masked = MARKER_RE.sub(_placeholder_counter(), text)
    sentences = split_sentences(masked)
    where: dict[int, int] = {}
    for j, sentence in enumerate(sentences):
        for m in _PLACEHOLDER.finditer(sentence):
            where[int(m.group(1))] = j
    k = max(0, context_sentences)
    headings = _headings(sentences)
    slots = []
    for i, m in enumerate(matches):
        j = where.get(i, 0)
        # a sentence that is little more than its markers ("[CITATION].") borrows the one before it
        back = k if len(_WORDS.findall(_PLACEHOLDER.sub(" ", sentences[j]))) >= MIN_SENTENCE_WORDS else max(k, 1)
        window = " ".join(sentences[max(0, j - back) : j + k + 1])
        slots.append(
            Slot(
                index=i,
                start=m.start(),
                end=m.end(),
                marker=m.group(0),
                sentence=_tidy(_PLACEHOLDER.sub(SLOT_TEXT, sentences[j])),
                context=_render(window, keep=i),
                focus=_render(sentences[j], keep=i, other=OTHER_TEXT),
                heading=headings[j],
            )
        )
    log.debug("found %d citation slots", len(slots))
    return slots


def _placeholder_counter():
    count = iter(range(1 << 30))
    return lambda m: f"{_OPEN}{next(count)}{_CLOSE}"


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
