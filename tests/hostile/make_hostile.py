"""Writes the hostile corpus: small hand-made files, one per way a file can be bad.

Run ``python tests/hostile/make_hostile.py`` to regenerate; the files are committed. What each
must give on import is listed in tests/test_hostile.py.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEEP = 20_000  # far past Python's recursion limit (1,000)


def good(i: int) -> dict:
    return {"doc_id": f"h{i}", "title": f"Good paper number {i} about retrieval", "authors": ["Ada Lovelace"],
            "year": 2020, "abstract": "We study things."}


def lines(records: list) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def write(name: str, data: bytes | str) -> None:
    (HERE / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def main() -> None:
    w = write
    # JSONL: one bad line among good ones
    w("lone-surrogate.jsonl", lines([good(1), '{"doc_id": "h2", "title": "Broken \\ud800 surrogate", '
                                             '"abstract": "x \\udfff y"}', good(3)]))
    w("entry-type-object.jsonl", lines([good(1), {**good(2), "entry_type": {"a": 1}}, good(3)]))
    w("non-string-types.jsonl", lines([
        {**good(1), "title": 1234},                   # a number as title: kept as text
        {**good(2), "abstract": {"text": "x"}},       # object as abstract: reported
        {**good(3), "authors": 7},                    # number as authors: reported
        {**good(4), "year": {"y": 2020}},             # object as year: year dropped
        {**good(5), "venue": ["ACL", "EMNLP"]},       # list as venue: first kept
        {**good(6), "doc_id": ["a"]},                 # list as doc_id: first kept
        {**good(7), "title": None},                   # no title: reported
        {**good(8), "title": True},                   # boolean title: reported
        "[1, 2, 3]",                                  # not an object: reported
        good(10),
    ]))
    w("deep-nesting.jsonl", lines([good(1), "[" * DEEP + "]" * DEEP, good(3)]))
    w("control-chars.jsonl", lines([{**good(1), "title": "Clear\x1b[2J\x1b]0;pwned\x07 screen\x00 \u202eevil",
                                     "authors": ["Bel\x07 Ringer"]}]))
    data = gzip.compress(lines([good(i) for i in range(1, 41)]).encode())
    w("truncated.jsonl.gz", data[: len(data) * 2 // 3])
    w("not-gzip.jsonl.gz", lines([good(1)]))
    w("utf16-bom.jsonl", lines([good(1), {**good(2), "title": "Über Café Stoff"}]).encode("utf-16"))
    w("utf16le-nobom.jsonl", lines([good(1), good(2)]).encode("utf-16-le"))
    w("latin1.jsonl", lines([good(1), {**good(2), "title": "Über Café Stoff"}]).replace("\\u00dc", "Ü")
      .replace("\\u00e9", "é").encode("latin-1"))
    w("empty.jsonl", b"")
    # CSL-JSON
    w("csl-author-number.json", json.dumps([
        {"id": "a", "type": "article-journal", "title": "First CSL item", "author": [{"family": "Doe", "given": "J"}]},
        {"id": "b", "type": "article-journal", "title": "Author is a number", "author": 42},
        {"id": "c", "type": "article-journal", "title": "Third CSL item", "author": [{"literal": "ACME"}]},
    ], indent=1))
    deep = "[" * DEEP + "]" * DEEP
    w("deep-nesting-csl.json", '[{"id": "a", "title": "First CSL item"},\n' + deep
      + ',\n{"id": "c", "title": "Third CSL item"}]')
    w("utf16-bom-csl.json", json.dumps([{"id": "a", "title": "Zotero export in UTF-16"}]).encode("utf-16"))
    w("junk.json", "hello, this is not JSON")
    w("empty-list.json", "[]")
    # BibTeX
    w("empty.bib", b"")
    w("whitespace.bib", " \n\t\n   \n")
    w("junk.bib", "This is a shopping list.\nEggs, milk, bread.\n")
    w("comments-only.bib", "% Only comments here\n% and nothing else\n@comment{nothing to see}\n")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("refs.bib", "@article{a, title={Inside a zip}}")
    w("zip-renamed.bib", buf.getvalue())
    w("nul-filled.bib", b"\x00" * 70_000)
    w("latin1.bib", ("@article{m, title={M\u00fcller's caf\u00e9 theory}, author={M\u00fcller, Jos\u00e9}, "
                     "year={1999}}\n").encode("latin-1"))
    w("utf16le-nobom.bib", "@article{u, title={A title in UTF-16 without BOM}, year={2001}}\n".encode("utf-16-le"))
    w("crossref.bib", "@inproceedings{child, crossref={parent}, author={Doe, Jane}, pages={1--10}}\n\n"
      "@proceedings{parent, title={Proceedings of the Hostile Workshop}, year={2021}, publisher={ACM}}\n")
    w("control-chars.bib", "@article{c, title={Bell\x07 and \x1b[31mred\x1b[0m \u202eright-to-left}, year={2020}}\n")
    # Drafts
    w("draft-utf16le-nobom.txt", "Dense retrieval [CITATION] beats BM25 on some tasks.\n".encode("utf-16-le"))
    w("draft-latin1.txt", "Caf\u00e9 retrieval [CITATION] works.\n".encode("latin-1"))


if __name__ == "__main__":
    main()
