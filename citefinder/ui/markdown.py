"""Untrusted text (paper metadata, LLM output) rendered through Markdown as plain text.

Paper titles and abstracts come from files a user imports; they may hold Markdown or HTML
(``<img src=x onerror=...>``, ``[x](javascript:...)``, ``$...$``, Streamlit's ``:red[...]``).
Every ASCII punctuation character is backslash-escaped, which CommonMark defines as "render
this character literally", so nothing in the text can open a link, an image, HTML, math or a
directive; bare URLs get an invisible word joiner so GFM does not autolink them. Whitespace is
collapsed so a newline cannot start a heading or a list either.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# All ASCII punctuation (CommonMark 0.31, section 2.1): !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_SPACE = re.compile(r"\s+")
# GFM turns bare "www.x", "https://x" and "a@b.c" into links even when their punctuation is escaped;
# an invisible word joiner inside each trigger keeps them plain text.
WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGERS = re.compile(r"(?i)(\bwww)(?=\.)|(:)(?=//)|(@)")


def escape_markdown(text: object, *, strip: bool = True) -> str:
    """``text`` as a Markdown snippet that renders exactly as the text (one line, no markup).

    ``escape_markdown("**x**")`` is ``\\*\\*x\\*\\*``: it renders as ``**x**``, not as bold.
    """
    if text is None:
        return ""
    flat = _SPACE.sub(" ", str(text))
    if strip:
        flat = flat.strip()
    flat = _AUTOLINK_TRIGGERS.sub(lambda m: m.group(0) + WORD_JOINER, flat)
    return _PUNCT.sub(r"\\\1", flat)


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an http(s) link with a host (parentheses encoded), else None (no ``javascript:``...)."""
    if not url:
        return None
    url = url.strip()
    if any(ch.isspace() or ch in "<>\"'`\\" for ch in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    # Parentheses would end a Markdown link destination; DOIs can hold them.
    return url.replace("(", "%28").replace(")", "%29")


def link(label: str, url: str | None) -> str:
    """A Markdown link with an escaped label, or the escaped label alone when the URL is unsafe."""
    target = safe_url(url)
    if target is None:
        return escape_markdown(label)
    return f"[{escape_markdown(label)}]({target})"


def code_span(text: object) -> str:
    """``text`` as an inline code span (one line): shown as it is, backslashes included; a fence longer than any
    run of backticks inside it, so none can close it early."""
    flat = _SPACE.sub(" ", str(text or "")).strip()
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


_LIGHT = re.compile(r"`([^`]+)`|\*([^*\s](?:[^*]*[^*\s])?)\*")


def message_markdown(text: object) -> str:
    """A message written for people (an error's text, a note) as Markdown: its `command` spans as code and its
    *words* in italics, everything else escaped as :func:`escape_markdown` does (so a file name in it can open
    no link, image or HTML). The messages of :class:`~citefinder.errors.CitefinderError` are written this way."""
    if text is None:
        return ""
    flat = _SPACE.sub(" ", str(text)).strip()
    out, pos = [], 0
    for m in _LIGHT.finditer(flat):
        out.append(escape_markdown(flat[pos:m.start()], strip=False))
        out.append(code_span(m.group(1)) if m.group(1) is not None else f"*{escape_markdown(m.group(2))}*")
        pos = m.end()
    out.append(escape_markdown(flat[pos:], strip=False))
    return "".join(out)


def as_sentence(text: str) -> str:
    """``text`` as a sentence: a full stop at the end when it has none, and a capital first letter when it
    starts with a plain word (a file name, "refs.bib is ...", is left as written)."""
    text = text.strip()
    if not text:
        return text
    first = text.split(maxsplit=1)[0]
    if first.isalpha() and first.islower():
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else text + "."
