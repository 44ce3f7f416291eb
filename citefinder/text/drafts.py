"""Text of a draft the user uploads (PDF, LaTeX, plain text, Markdown), with errors they can act on."""

from __future__ import annotations

import logging

from citefinder.errors import InputError
from citefinder.text.decode import decode_text
from citefinder.text.pdf import open_pdf, page_texts

log = logging.getLogger(__name__)

MAX_DRAFT_BYTES = 50 * 1024 * 1024
TEXT_SUFFIXES = (".tex", ".txt", ".md", ".markdown", ".text")
SUPPORTED = "PDF (.pdf), LaTeX (.tex), plain text (.txt) or Markdown (.md)"


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def extract_draft_text(data: bytes, filename: str, max_bytes: int = MAX_DRAFT_BYTES) -> str:
    """The text of a draft file; PDF pages are joined with ``"\\n"``.

    Markers broken across lines by PDF extraction are left as they are (``find_slots`` finds them).
    Raises InputError when the file is too large, empty, of an unsupported type, not a readable
    PDF, encrypted, or a PDF without a text layer.
    """
    name = filename or "the file"
    lower = name.lower()
    if len(data) > max_bytes:
        raise InputError(
            f"{name} is {_megabytes(len(data))}, larger than the {_megabytes(max_bytes)} limit; "
            f"upload a smaller file or only the text."
        )
    if lower.endswith(".pdf"):
        return _pdf_text(data, name)
    if not lower.endswith(TEXT_SUFFIXES):
        raise InputError(f"{name}: unsupported file type; upload {SUPPORTED}.")
    if not data.strip():
        raise InputError(f"{name} is empty.")
    text = decode_text(data)
    if not text.strip():
        raise InputError(f"{name} is empty.")
    return text


def _pdf_text(data: bytes, name: str) -> str:
    if not data.strip():
        raise InputError(f"{name} is empty.")
    reader = open_pdf(data, name)
    text = "\n".join(page_texts(reader, name))
    if not text.strip():
        raise InputError(
            f"{name} has no text layer (scanned?); run OCR on it or paste the text instead."
        )
    log.debug("%s: %d pages, %d characters", name, len(reader.pages), len(text))
    return text
