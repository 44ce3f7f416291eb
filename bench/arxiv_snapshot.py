"""Convert CiteFinder JSON Lines (papers-333k.jsonl.gz) into the arXiv metadata snapshot's format, so the
arXiv importer can be measured on a corpus of real size (issue 36).

Each paper becomes one snapshot line (``id``, ``submitter``, ``authors``, ``title``, ``comments``,
``journal-ref``, ``doi``, ``report-no``, ``categories``, ``license``, ``abstract``, ``versions``,
``update_date``, ``authors_parsed``). Papers without an arXiv id (the conference papers) get ``"id": null``:
the importer names them by the identity rule, as the JSONL import does. The year goes into the first
version's date; the venue into ``journal-ref``; the category is ``cs.LG`` for every paper (papers-333k keeps
no categories). Authors are split into [last, first, ""] at their last space.

Usage: python bench/arxiv_snapshot.py ../shared/data/papers-333k.jsonl.gz bench/out/papers-333k-arxiv.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path


def snapshot_record(r: dict) -> dict:
    year = r.get("year")
    authors = [a for a in r.get("authors") or [] if isinstance(a, str)]
    parsed = [[a.rsplit(" ", 1)[-1], a.rsplit(" ", 1)[0] if " " in a else "", ""] for a in authors]
    return {
        "id": r.get("arxiv_id") or None,
        "submitter": authors[0] if authors else None,
        "authors": ", ".join(authors),
        "title": r.get("title"),
        "comments": None,
        "journal-ref": r.get("venue"),
        "doi": r.get("doi"),
        "report-no": None,
        "categories": "cs.LG",
        "license": None,
        "abstract": r.get("abstract") or "",
        "versions": [{"version": "v1", "created": f"Mon, 1 Jan {year} 00:00:00 GMT"}] if year else [],
        "update_date": f"{year}-01-01" if year else None,
        "authors_parsed": parsed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("papers", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if args.papers.name.endswith(".gz") else open
    n = 0
    with opener(args.papers, "rt", encoding="utf-8") as f, open(args.out, "w", encoding="utf-8") as out:
        for line in f:
            if line.strip():
                out.write(json.dumps(snapshot_record(json.loads(line)), ensure_ascii=False) + "\n")
                n += 1
    print(f"wrote {n:,} records to {args.out} ({args.out.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
