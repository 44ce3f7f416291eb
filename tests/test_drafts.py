import io
from pathlib import Path

import pypdf
import pytest

from citefinder.errors import InputError
from citefinder.text.drafts import extract_draft_text
from citefinder.text.slots import find_slots

DATA = Path(__file__).parent / "data"
DRAFT = (DATA / "draft.pdf").read_bytes()


def _pdf_bytes(writer: pypdf.PdfWriter) -> bytes:
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_pdf_draft_text_keeps_all_three_markers_findable():
    text = extract_draft_text(DRAFT, "draft.pdf")
    assert text == (
        "Dense retrievers encode queries and documents separately [CITATION]. Sparse\n"
        "methods such as BM25 remain strong baselines [CITA-\n"
        "TION]. Fusion of both was shown to help, e.g. in recent work [CITATION]."
    )
    slots = find_slots(text)
    assert [s.marker for s in slots] == ["[CITATION]", "[CITA-\nTION]", "[CITATION]"]
    assert slots[1].sentence == "Sparse methods such as BM25 remain strong baselines [CITATION]."
    assert slots[2].sentence == "Fusion of both was shown to help, e.g. in recent work [CITATION]."


def test_multi_page_pdf_pages_joined_with_newline():
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(DRAFT))
    writer.append(io.BytesIO(DRAFT))
    text = extract_draft_text(_pdf_bytes(writer), "two.pdf")
    one = extract_draft_text(DRAFT, "draft.pdf")
    assert text == one + "\n" + one
    assert len(find_slots(text)) == 6


@pytest.mark.parametrize("name", ["draft.tex", "notes.txt", "README.md", "UPPER.TXT"])
def test_text_drafts_are_decoded(name):
    raw = "Ein Entwurf über Suche [CITATION].\n".encode("utf-8")
    assert extract_draft_text(raw, name) == "Ein Entwurf über Suche [CITATION].\n"


def test_text_drafts_in_other_encodings():
    assert extract_draft_text("Café [CITE]".encode("cp1252"), "a.txt") == "Café [CITE]"
    assert extract_draft_text(b"\xef\xbb\xbfWith BOM [?]", "a.md") == "With BOM [?]"
    assert extract_draft_text("UTF-16 [CITATION]".encode("utf-16"), "a.tex") == "UTF-16 [CITATION]"


def test_too_large_names_size_and_limit():
    with pytest.raises(InputError) as err:
        extract_draft_text(b"x" * 3 * 1024 * 1024, "big.txt", max_bytes=1024 * 1024)
    assert str(err.value) == "big.txt is 3.0 MB, larger than the 1.0 MB limit; upload a smaller file or only the text."


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"", "empty.txt", "empty.txt is empty."),
        (b"  \n\t", "blank.md", "blank.md is empty."),
        (b"", "empty.pdf", "empty.pdf is empty."),
        (b"PK\x03\x04", "draft.docx", "draft.docx: unsupported file type; upload PDF (.pdf), LaTeX (.tex), "
         "plain text (.txt) or Markdown (.md)."),
    ],
)
def test_empty_and_unsupported(data, name, message):
    with pytest.raises(InputError) as err:
        extract_draft_text(data, name)
    assert str(err.value) == message


def test_corrupt_pdf():
    with pytest.raises(InputError, match=r"^cut\.pdf is not a readable PDF \(.+\)\. Re-export it and try again\.$"):
        extract_draft_text(DRAFT[:300], "cut.pdf")
    with pytest.raises(InputError, match=r"^fake\.pdf is not a readable PDF"):
        extract_draft_text(b"this is plain text, not a PDF", "fake.pdf")


def test_encrypted_pdf():
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(DRAFT))
    writer.encrypt("secret", algorithm="RC4-128")
    with pytest.raises(InputError) as err:
        extract_draft_text(_pdf_bytes(writer), "locked.pdf")
    message = str(err.value)
    assert message.startswith("locked.pdf") and "encrypted" in message and "remove the password" in message


@pytest.mark.parametrize("algorithm", ["AES-128", "AES-256"])
def test_aes_encrypted_pdf_without_user_password_is_read(algorithm):
    # needs `cryptography` (a declared dependency); pypdf refuses AES without it
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(DRAFT))
    writer.encrypt("", owner_password="owner", algorithm=algorithm)
    assert extract_draft_text(_pdf_bytes(writer), "aes.pdf") == extract_draft_text(DRAFT, "draft.pdf")


def test_aes_encrypted_pdf_with_a_password_is_refused():
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(DRAFT))
    writer.encrypt("secret", algorithm="AES-256")
    with pytest.raises(InputError, match=r"^aes-locked\.pdf is encrypted"):
        extract_draft_text(_pdf_bytes(writer), "aes-locked.pdf")


def test_owner_password_only_pdf_is_read():
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(DRAFT))
    writer.encrypt("", owner_password="owner", algorithm="RC4-128")
    assert extract_draft_text(_pdf_bytes(writer), "restricted.pdf") == extract_draft_text(DRAFT, "draft.pdf")


def test_pdf_without_text_layer():
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    with pytest.raises(InputError) as err:
        extract_draft_text(_pdf_bytes(writer), "scan.pdf")
    message = str(err.value)
    assert message.startswith("scan.pdf") and "no text layer" in message and "OCR" in message
