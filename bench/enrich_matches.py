"""The matches ``library enrich`` stored in drafts-dev's libraries, for a hand check of their precision: every
entry of each enriched library that gained a field (its provenance names the literature record), a seeded sample
of them side by side with the record, and whether drafts-dev's own enrichment (``enrich.json``, title + year
within 3) matched the entry to the same record.

    python bench/enrich_matches.py --libraries bench/out/drafts-libs --literature /work/lit/papers-333k \\
        --sample 50 --seed 36 [--papers a,b]

Libraries are read read-only (:func:`citefinder.library.reference.stored_papers`).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/drafts-dev")
    p.add_argument("--libraries", type=Path, required=True, help="drafts_eval.py --libraries of an --enrich-from run")
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--part", choices=("train", "test"), default="test")
    p.add_argument("--sample", type=int, default=50)
    p.add_argument("--seed", type=int, default=36)
    p.add_argument("--out", type=Path, help="every match as JSON")
    args = p.parse_args()

    from citefinder.library.identity import first_author_surname
    from citefinder.library.reference import stored_papers
    from citefinder.sources.local import LocalLiterature

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    lit = LocalLiterature.open(args.literature)
    matches = []
    for paper in split[args.part]:
        folder = next(args.libraries.glob(f"{paper}-*-from-{lit.name}"), None)
        if folder is None:
            continue
        theirs = json.loads((args.data / paper / "enrich.json").read_text()).get("matches", {})
        for entry in stored_papers(folder):
            sources = {sid for _, src, sid in entry.provenance if src == lit.name}
            for sid in sorted(sources):
                matches.append({"paper": paper, "key": entry.key, "doc_id": entry.doc_id, "record": sid,
                                "fields": [f for f, _, s in entry.provenance if s == sid],
                                "title": entry.title, "year": entry.year, "author": first_author_surname(entry),
                                "drafts_dev": theirs.get(entry.key or "")})
    records = {r.doc_id: r for r in lit.get([m["record"] for m in matches])}
    for m in matches:
        r = records.get(m["record"])
        m["record_title"], m["record_year"] = (r.title, r.year) if r else (None, None)
        m["record_author"] = first_author_surname(r) if r else None
    agree = sum(m["drafts_dev"] == m["record"] for m in matches)
    differ = [m for m in matches if m["drafts_dev"] and m["drafts_dev"] != m["record"]]
    print(f"{len(matches)} matches stored; drafts-dev's enrich.json matched {agree} of them to the same record, "
          f"{len(differ)} to another, {len(matches) - agree - len(differ)} not at all")
    sample = random.Random(args.seed).sample(matches, min(args.sample, len(matches)))
    print(f"\nSeeded sample of {len(sample)} (random.Random({args.seed}).sample):\n")
    print("| # | entry (key: title, year, first author) | record (id: title, year, first author) | fields | "
          "drafts-dev |\n|---|---|---|---|---|")
    for i, m in enumerate(sample, 1):
        same = "same" if m["drafts_dev"] == m["record"] else (m["drafts_dev"] or "none")
        print(f"| {i} | {m['key']}: {m['title'][:70]}, {m['year']}, {m['author']} | {m['record']}: "
              f"{(m['record_title'] or '')[:70]}, {m['record_year']}, {m['record_author']} | "
              f"{', '.join(m['fields'])} | {same} |")
    if differ:
        print("\nEvery match drafts-dev made to another record:\n")
        for m in differ:
            print(f"- {m['paper']}/{m['key']}: ours {m['record']}, drafts-dev {m['drafts_dev']}")
    if args.out:
        args.out.write_text(json.dumps(matches, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
