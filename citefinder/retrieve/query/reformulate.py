"""The "reformulate" agent: turn a slot's context into a retrieval query.

Removes what only adds noise to retrieval (citation markers, other references, LaTeX commands,
URLs, inline math) and extracts keywords for display and lexical hints.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace

from citefinder.retrieve.query import mentions
from citefinder.types import Query, Slot, StageTrace

MAX_KEYWORDS = 12

_MARKERS = re.compile(r"\[(?:CITATIONS?|CITE|\?)\]", re.IGNORECASE)
# \cite{..}, \citep[p.~3]{..}, \ref{..}, \label{..}, \url{..} ... dropped with their argument.
_LATEX_DROP = re.compile(
    r"\\(?:[a-zA-Z]*cite[a-zA-Z]*\*?|[a-zA-Z]*ref|label|url|href|footnote|includegraphics)"
    r"\s*(?:\[[^\]]*\]\s*)*(?:\{[^{}]*\}\s*)*"
)
# \emph{word}, \textbf{word}: keep the word.
_LATEX_KEEP = re.compile(r"\\[a-zA-Z]+\*?\s*\{([^{}]*)\}")
_LATEX_BARE = re.compile(r"\\[a-zA-Z]+\*?|\\.")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.DOTALL)
_NUMERIC_REF = re.compile(r"\[\s*\d+(?:\s*[-–,;]\s*\d+)*\s*\]")
# (Smith et al., 2020), (Smith and Jones 2019; Lee, 2021a)
_AUTHOR_YEAR = re.compile(
    r"\((?:see\s+|e\.g\.,?\s+)?[A-Z][^()\d]{0,80}?,?\s+(?:19|20)\d\d[a-z]?"
    r"(?:\s*[;,]\s*[A-Z][^()\d]{0,80}?,?\s+(?:19|20)\d\d[a-z]?)*\)"
)
# Trailing punctuation belongs to the sentence, not the URL.
_URL = re.compile(r"(?:https?://|www\.)\S+?(?=[.,;:!?)\]]*(?:\s|$))")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)])")
_SPACES = re.compile(r"\s+")

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")

STOPWORDS = frozenset(
    """
    a about above after again against all also although am among an and another any are as at be
    because been before being below between both but by can could did do does doing done down during
    each either et al etc few for from further had has have having he her here hers him his how however
    i if in into is it its itself just may me might more most much must my neither no nor not now of off
    often on once one only or other others otherwise our ours out over own per same several she should
    since so some such than that the their theirs them then there therefore these they this those
    though through thus to too under until up upon us very via was we were what when where whether which
    while who whom whose why will with within without would yet you your e.g i.e eg ie vs
    use used uses using show shows shown showed propose proposed proposes work works paper papers
    approach approaches method methods recent recently prior previous previously well known like
    first second new based instead many various different similar unlike cite cited citation see
    section sections table figure fig appendix chapter eq equation know knows
    """.split()
)


def clean_context(text: str) -> str:
    """The context without citation markers, references, LaTeX commands, math, URLs or extra spaces."""
    out = _MARKERS.sub(" ", text)
    out = _LATEX_DROP.sub(" ", out)
    out = _MATH.sub(" ", out)
    prev = None
    while prev != out:  # nested \emph{\textbf{x}}
        prev, out = out, _LATEX_KEEP.sub(r"\1", out)
    out = _LATEX_BARE.sub(" ", out)
    out = out.replace("~", " ").replace("{", " ").replace("}", " ")
    out = _URL.sub(" ", out)
    out = _NUMERIC_REF.sub(" ", out)
    out = _AUTHOR_YEAR.sub(" ", out)
    out = _EMPTY_BRACKETS.sub(" ", out)
    out = _SPACES.sub(" ", out)
    out = _SPACE_BEFORE_PUNCT.sub(r"\1", out)
    return out.strip()


def _is_salient(word: str, sentence_start: bool) -> bool:
    """Acronyms, mixed case (hossRBM), hyphenated terms, capitalised words not opening a sentence."""
    if "-" in word:
        return True
    if sum(c.isupper() for c in word) >= 2 or any(c.isdigit() for c in word):
        return True
    return word[0].isupper() and not sentence_start


def extract_keywords(text: str, limit: int = MAX_KEYWORDS) -> tuple[str, ...]:
    """Content words in text order, deduped case-insensitively, at most ``limit``.

    When there are more than ``limit``, salient terms (acronyms, mixed-case names, hyphenated
    terms, capitalised words inside a sentence) are kept first; the result stays in text order.
    """
    found: list[tuple[int, int, str]] = []  # (priority, position, word)
    seen: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group(0).strip("'")
        low = word.lower()
        if low in seen or low in STOPWORDS:
            continue
        salient_candidate = len(word) >= 2 and (word.isupper() or "-" in word)
        if len(word) < 3 and not salient_candidate:
            continue
        if word.isdigit():
            continue
        before = text[: m.start()].rstrip()
        sentence_start = not before or before[-1] in ".!?"
        seen.add(low)
        found.append((0 if _is_salient(word, sentence_start) else 1, m.start(), word))
    kept = sorted(found)[:limit]
    return tuple(w for _, _, w in sorted(kept, key=lambda t: t[1]))


_THIS, _OTHER = "\ue010", "\ue011"  # markers protected from cleaning


def clean_focus(focus: str) -> str:
    """A slot's focus sentence cleaned like a context, its [CITATION] and [OTHER] markers kept."""
    protected = focus.replace(mentions.THIS, f" {_THIS} ").replace(mentions.OTHER, f" {_OTHER} ")
    cleaned = clean_context(protected)
    return cleaned.replace(_THIS, mentions.THIS).replace(_OTHER, mentions.OTHER)


def reformulate(slot_or_text: Slot | str, *, max_keywords: int = MAX_KEYWORDS) -> tuple[Query, StageTrace]:
    """Build the retrieval :class:`Query` from a slot (its context, its own clause, the names and
    authors next to its marker) or from a plain question."""
    start = time.perf_counter()
    raw = slot_or_text.context if isinstance(slot_or_text, Slot) else slot_or_text
    text = clean_context(raw)
    keywords = extract_keywords(text, max_keywords)
    query = Query(text=text, keywords=keywords)
    if isinstance(slot_or_text, Slot) and slot_or_text.focus:
        focus = clean_focus(slot_or_text.focus)
        local = clean_context(mentions.local_part(focus).replace(mentions.OTHER, " "))
        query = replace(
            query,
            local=local if local != text else "",
            names=mentions.name_mentions(focus),
            authors=mentions.author_mentions(focus),
            near=mentions.near_words(focus),
            window=clean_context(slot_or_text.window) if slot_or_text.window else "",
        )
    trace = StageTrace(
        agent="reformulate",
        status="ok" if text else "error",
        message=f"{len(keywords)} keywords" if text else "nothing left to search for after cleaning the context",
        inputs={"context": raw},
        params={"max_keywords": max_keywords},
        elapsed_s=time.perf_counter() - start,
        details={"query": query.to_dict(), "removed_chars": len(raw) - len(text)},
    )
    return query, trace
