"""Text from files nobody here wrote, made safe to store, print and export.

Imported metadata may hold lone UTF-16 surrogates (valid in JSON, not encodable as UTF-8),
terminal escape sequences (ESC, BEL: clear the screen, set the window title), NUL, and
bidirectional overrides (U+202E shows text reversed). :func:`clean_text` removes them when a
record is imported; :func:`terminal_safe` and :func:`strip_controls` guard output written from
libraries imported before that (or from any other source).
"""

from __future__ import annotations

import re

# C0 controls except tab/newline/carriage return, DEL, C1 controls.
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
# Bidirectional embeddings/overrides/isolates and marks, and the zero-width no-break space (BOM).
_BIDI = "\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff"
_SURROGATES = "\ud800-\udfff"
_UNSAFE = re.compile(f"[{_CONTROLS}{_BIDI}]")
_SURROGATE = re.compile(f"[{_SURROGATES}]")
# An ANSI escape sequence (CSI ... final byte, or OSC ... BEL/ST) is dropped whole, not just its ESC.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x9b[0-?]*[ -/]*[@-~]")


def replace_surrogates(text: str) -> str:
    """Lone surrogates (``"\\ud800"`` from JSON) become U+FFFD so the text encodes as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def strip_controls(text: str) -> str:
    """``text`` without escape sequences, control characters (tab/newline kept) and bidi overrides."""
    return _UNSAFE.sub("", _ANSI.sub("", text))


def clean_text(text: str) -> str:
    """Surrogates replaced and controls stripped: what an imported text field is stored as."""
    if text.isascii() and text.isprintable():  # nothing to replace or strip (most of a dump's fields): no regex
        return text
    return strip_controls(replace_surrogates(text))


def terminal_safe(text: str) -> str:
    """Text safe to print to a terminal: no escapes or controls (newlines and tabs kept)."""
    return clean_text(text)


_JSON_UNSAFE = re.compile(f"[{_CONTROLS}{_BIDI}]")


def json_safe(json_text: str) -> str:
    """JSON text (``ensure_ascii=False``) with controls and bidi overrides written as ``\\uXXXX``
    escapes: the same data, harmless on a terminal (they can only occur inside JSON strings)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json_text)
