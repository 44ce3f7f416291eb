"""How many of drafts-dev's entries the same-work decision completes from a literature library, entry by entry:
each paper's ``refs.bib`` read as the library reads it (one entry per doc id), the entries that lack an abstract
or an id looked up with :func:`citefinder.sources.same.find_same` (what ``library enrich`` runs), nothing
written. Run it on two checkouts (``PYTHONPATH``) and compare the JSON files to see what a rule change costs.

    python bench/enrich_rule.py --literature /work/lit/papers-333k --part test --out bench/out/rule-after.json
    python bench/enrich_rule.py --compare bench/out/rule-before.json bench/out/rule-after.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import write_json

ROOT = Path(__file__).resolve().parents[1]


def measure(data: Path, literature: Path, part: str) -> list[dict[str, object]]:
    from citefinder.library.formats.bib import read_bib
    from citefinder.library.identity import first_author_surname
    from citefinder.sources.enrich import completed, lacks
    from citefinder.sources.local import LocalLiterature
    from citefinder.sources.same import find_same
    from citefinder.types import Paper

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    lit = LocalLiterature.open(literature)
    rows: list[dict[str, object]] = []
    for name in split[part]:
        papers = {p.doc_id: p for p in read_bib(data / name / "refs.bib") if isinstance(p, Paper)}
        asked = [p for p in papers.values() if lacks(p)]
        for paper, match in zip(asked, find_same(lit, asked), strict=True):
            row: dict[str, object] = {"paper": name, "key": paper.key, "title": paper.title, "year": paper.year,
                                      "author": first_author_surname(paper)}
            if match.found is not None:
                _, gained = completed(paper, match.found)
                r = match.found.paper
                row.update(status="found", via=match.via, record=match.found.source_id, gained=list(gained),
                           record_title=r.title, record_year=r.year, record_author=first_author_surname(r))
            elif match.ambiguous:
                row.update(status="ambiguous", why=match.why, candidates=[c.source_id for c in match.ambiguous])
            else:
                row.update(status="not found")
            rows.append(row)
    return rows


def summary(rows: list[dict[str, object]]) -> str:
    found = [r for r in rows if r["status"] == "found"]
    abstract = sum("abstract" in r["gained"] for r in found)  # type: ignore[operator]
    ambiguous = sum(r["status"] == "ambiguous" for r in rows)
    return (f"{len(rows)} entries asked; {len(found)} found ({abstract} gain an abstract), {ambiguous} ambiguous, "
            f"{len(rows) - len(found) - ambiguous} not found")


def compare(before: list[dict[str, object]], after: list[dict[str, object]]) -> None:
    print("before:", summary(before))
    print("after: ", summary(after))
    old = {(r["paper"], r["key"], r["title"]): r for r in before}
    for r in after:
        o = old.get((r["paper"], r["key"], r["title"]))
        if o is not None and o["status"] != r["status"]:
            print(f"- {r['paper']}/{r['key']}: {o['status']} -> {r['status']} ({r.get('why', '')}): "
                  f"{r['title'][:70]!r} ({r['year']}, {r['author']}) was "  # type: ignore[index]
                  f"{o.get('record')}: {str(o.get('record_title'))[:70]!r} ({o.get('record_year')}, "
                  f"{o.get('record_author')})")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--literature", type=Path)
    p.add_argument("--part", choices=("train", "test"), default="test")
    p.add_argument("--out", type=Path)
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = p.parse_args()
    if args.compare:
        compare(*(json.loads(f.read_text()) for f in args.compare))
        return 0
    rows = measure(args.data, args.literature, args.part)
    print(summary(rows))
    write_json(args.out, rows, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
