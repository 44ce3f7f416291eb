"""How a file's encoding is named to its user, and what a text holds that the encoding cannot write: the words of
every "cannot hold" message (the safe writer's and a project file's own)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["describe_encoding", "unencodable"]


def describe_encoding(codec: str, original: bytes | None = None) -> str:
    """The name a user knows for a file's encoding: a one-byte file without Windows-only bytes is Latin-1."""
    if codec.lower() in ("cp1252", "windows-1252", "latin-1", "latin1", "iso-8859-1"):
        if original is not None and not any(0x80 <= b <= 0x9F for b in original):
            return "Latin-1 (ISO-8859-1)"
        return "Windows-1252"
    return {"utf-8": "UTF-8", "utf-8-sig": "UTF-8"}.get(codec.lower(), codec)


def _offending_key(text: str, start: int, end: int) -> str:
    """The key (or word) around ``text[start:end]``: what the user must change."""
    stops = "{},\\ \t\r\n"
    a, b = start, end
    while a > 0 and text[a - 1] not in stops:
        a -= 1
    while b < len(text) and text[b] not in stops:
        b += 1
    return text[a:b]


def unencodable(source: Path, text: str, codec: str, error: UnicodeEncodeError, original: bytes | None = None
                ) -> str:
    """What cannot be written into ``source`` in ``codec``: its encoding as the user knows it (from ``original``,
    its bytes, else the file's), the character and the key (or word) holding it."""
    if original is None:
        try:
            original = source.read_bytes() if source.is_file() else None
        except OSError:
            original = None
    key = _offending_key(text, error.start, error.end)
    return (f"{source.name} is written in {describe_encoding(codec, original)}, which cannot hold "
            f"{text[error.start:error.end]!r} (in {key!r})")
