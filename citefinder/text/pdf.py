"""Opening a PDF (pypdf) with errors a user can act on, and the plain text of its pages."""

from __future__ import annotations

import io
import logging
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
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not _decrypts_with_empty_password(reader, name):
            raise InputError(f"{name} is encrypted; remove the password and try again.")
        if len(reader.pages) == 0:
            raise InputError(f"{name} is not a readable PDF (it has no pages).")
    except InputError:
        raise
    except Exception as e:  # pypdf raises many types on broken files (PdfReadError, ValueError, KeyError...)
        raise InputError(f"{name} is not a readable PDF ({_short(e)}). Re-export it and try again.") from e
    return reader


def _decrypts_with_empty_password(reader: Any, name: str) -> bool:
    from pypdf.errors import DependencyError

    try:
        return bool(reader.decrypt(""))
    except DependencyError as e:  # AES needs the `cryptography` package (a declared dependency)
        raise InputError(f"{name} is AES-encrypted and reading it needs the cryptography package: "
                         f"pip install cryptography ({_short(e)}).") from e
    except Exception:  # an algorithm pypdf cannot handle at all is as good as locked
        return False


def _short(e: Exception) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:160]


def page_texts(reader: Any, name: str) -> list[str]:
    """Plain text of every page (a page that fails to extract gives "" and a logged warning)."""
    texts = []
    for i, page in enumerate(reader.pages, start=1):
        try:
            texts.append(page.extract_text() or "")
        except Exception as e:  # one broken page should not lose the others
            log.warning("%s: could not extract text of page %d: %s", name, i, _short(e))
            texts.append("")
    return texts

