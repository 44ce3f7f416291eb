"""Bytes of unknown encoding (a draft, a .bib, a JSON export) turned into text, and files that only
look like text recognised (a ZIP, a PDF, gzip, binary data)."""

from __future__ import annotations

_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
)


def sniff_encoding(head: bytes) -> str | None:
    """The encoding the first bytes of a file announce (BOM) or betray (UTF-16 without BOM:
    NUL in every other byte of ASCII-range text); None when they look like UTF-8 or a one-byte code."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    sample = head[:4096]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        # mostly-ASCII UTF-16 text has a NUL in (nearly) every high byte and (nearly) none in the low ones
        if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
            return "utf-16-le"
        if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "utf-16-be"
    return None


def binary_kind(head: bytes) -> str | None:
    """What a file that should hold text holds instead ("a ZIP archive", ...), or None if it looks like text."""
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "a ZIP archive (a .zip, .docx or .xlsx renamed?)"
    if head.startswith(b"%PDF"):
        return "a PDF"
    if head.startswith(b"\x1f\x8b"):
        return "gzip-compressed data (name it .jsonl.gz, or unpack it)"
    if b"\x00" in head[:65536] and sniff_encoding(head) is None:
        return "binary data (it contains NUL bytes)"
    return None


def decode_text(data: bytes) -> str:
    """Decode bytes of unknown encoding: a BOM's encoding, UTF-16 without BOM, UTF-8, then cp1252,
    then latin-1 (which never fails)."""
    encoding = sniff_encoding(data[:4096])
    if encoding:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            pass
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")



_BOM_CODECS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xef\xbb\xbf", "utf-8"),
)


def decode_keeping_encoding(data: bytes) -> tuple[str, str, bytes]:
    """``data`` decoded as :func:`decode_text` does, with what writes it back byte for byte: the text
    (no BOM), its codec and its BOM (``text.encode(codec)`` prefixed with the BOM gives ``data`` again)."""
    for bom, codec in _BOM_CODECS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(codec), codec, bom
            except UnicodeDecodeError:
                break
    sniffed = sniff_encoding(data[:4096])
    if sniffed in ("utf-16-le", "utf-16-be"):
        try:
            return data.decode(sniffed), sniffed, b""
        except UnicodeDecodeError:
            pass
    for codec in ("utf-8", "cp1252"):
        try:
            return data.decode(codec), codec, b""
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1", b""
