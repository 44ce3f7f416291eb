"""Write the PDF fixtures in this folder with a tiny pure-Python PDF writer (no dependency).

Run from the repository root: ``python tests/data/make_pdfs.py``. The PDFs are committed; this
script documents exactly what they contain. Text uses Helvetica with WinAnsi encoding.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def _escape(text: str) -> bytes:
    raw = text.encode("cp1252")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def make_pdf(lines: list[tuple[float, float, float, str]], title: str | None = None) -> bytes:
    """One-page PDF; ``lines`` are ``(x, y, font_size, text)`` in points from the bottom left."""
    content = b"".join(
        b"BT /F1 %g Tf %g %g Td (%s) Tj ET\n" % (size, x, y, _escape(text)) for x, y, size, text in lines
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    if title is not None:
        objects.append(b"<< /Title (%s) /Producer (make_pdfs.py) >>" % _escape(title))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    info = b" /Info %d 0 R" % len(objects) if title is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


PAPER = [
    (72, 740, 18, "Sparse Retrieval for Citation Recommendation"),
    (72, 718, 18, "in Scientific Drafts"),
    (72, 690, 11, "Jörg Müller1, Ana López2 and Wei Zhang1*"),
    (72, 676, 9, "1University of Example, 2Institute of Testing, {jmueller,wzhang}@example.org"),
    (72, 650, 11, "Abstract"),
    (72, 634, 10, "We study how to find the papers behind citation markers in a draft. Our retrie-"),
    (72, 621, 10, "val pipeline fuses BM25 and dense scores and improves recall by 12.5% on two"),
    (72, 608, 10, "benchmarks."),
    (72, 580, 11, "1 Introduction"),
    (72, 564, 10, "Writers leave placeholders while drafting and fill them in later."),
    (72, 90, 8, "DOI: 10.1234/CITE.2024.001. Preprint arXiv:2401.01234v2 [cs.IR]."),
]

DRAFT = [
    (72, 740, 11, "Dense retrievers encode queries and documents separately [CITATION]. Sparse"),
    (72, 726, 11, "methods such as BM25 remain strong baselines [CITA-"),
    (72, 712, 11, "TION]. Fusion of both was shown to help, e.g. in recent work [CITATION]."),
]


def main() -> None:
    (HERE / "paper.pdf").write_bytes(make_pdf(PAPER, title="Microsoft Word - paper_final_v3.docx"))
    (HERE / "draft.pdf").write_bytes(make_pdf(DRAFT, title="Draft"))


if __name__ == "__main__":
    main()
