"""Opening a PDF (pypdf) with errors a user can act on, and the plain text of its pages."""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from citefinder.errors import InputError

log = logging.getLogger(__name__)


def open_pdf(data: bytes, name: str) -> Any:
    """A ``pypdf.PdfReader`` over ``data``; InputError when it is empty, corrupt or encrypted.

    A PDF encrypted only with an owner password (empty user password) is opened.
    """
    from pypdf import PdfReader

    if not data:
        raise InputError(f"{name} is empty.")
    kind = looks_like(data)
    if kind is not None:
        raise InputError(f"{name} is not a PDF: it looks like {kind}." + HINTS.get(kind, ""))
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not _decrypts_with_empty_password(reader, name):
            raise InputError(f"{name} is encrypted; remove the password and try again.")
        if len(reader.pages) == 0:
            raise InputError(f"{name} is not a readable PDF (it has no pages).")
    except InputError:
        raise
    except Exception as e:  # pypdf raises many types on broken files (PdfReadError, ValueError, KeyError...)
        raise InputError(f"{name} is not a readable PDF ({short_error(e)}). Re-export it and try again.") from e
    return reader


BIBTEX = "a BibTeX file (a bibliography)"
HINTS = {BIBTEX: " To draw the draft's citations from it, use *Pair with your .bib*; to add its papers to your "
                 "library, import it on the Library page (or `citefinder library import`)."}


def looks_like(data: bytes) -> str | None:
    """What a file given as a PDF really is, when its start says so (None: a PDF, or nothing recognisable)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"%PDF") or b"%PDF-" in data[:1024]:
        return None
    text = head.decode("utf-8", "replace")
    if re.search(r"^\s*@(article|inproceedings|misc|book|incollection|techreport|phdthesis|mastersthesis|online|"
                 r"string|preamble|comment|unpublished|proceedings|inbook|manual)\s*[{(]", text, re.I | re.M):
        return BIBTEX
    if "\\documentclass" in text or "\\begin{document}" in text or "\\section{" in text:
        return "a LaTeX file (upload it as the draft: .tex is read as it is)"
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive (a .docx or .zip?): export the document as PDF"
    if head[:1] in (b"{", b"["):
        return "a JSON file"
    if head.startswith(b"<"):
        return "an HTML or XML page (a saved web page?): download the PDF itself"
    return None


def _decrypts_with_empty_password(reader: Any, name: str) -> bool:
    from pypdf.errors import DependencyError

    try:
        return bool(reader.decrypt(""))
    except DependencyError as e:  # AES needs the `cryptography` package (a declared dependency)
        raise InputError(f"{name} is AES-encrypted and reading it needs the cryptography package: "
                         f"pip install cryptography ({short_error(e)}).") from e
    except Exception:  # an algorithm pypdf cannot handle at all is as good as locked
        return False


def short_error(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:160]


def page_texts(reader: Any, name: str) -> list[str]:
    """Plain text of every page (a page that fails to extract gives "" and a logged warning)."""
    texts = []
    for i, page in enumerate(reader.pages, start=1):
        try:
            texts.append(page.extract_text() or "")
        except Exception as e:  # one broken page should not lose the others
            log.warning("%s: could not extract text of page %d: %s", name, i, short_error(e))
            texts.append("")
    return texts

