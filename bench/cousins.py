"""Cousins (issue 49 items 2 and 4): the papers of a run's libraries, and how often the top two are close relatives.

    python bench/cousins.py papers RUN.json            # writes RUN.papers.json (bench/autofill.py rows reads it)
    python bench/cousins.py slots RUN.json [...]       # top-1 right / wrong by whether the runner-up is a cousin
    python bench/cousins.py tilt BEFORE.json AFTER.json  # R@1 per paper, refs.bib -> enriched (the fused ranking)

``papers`` opens each paper's library of a ``bench/drafts_eval.py`` run (its ``libraries`` folder) read only and
writes every paper's title, authors, year and abstract by doc_id, so that the confidence's cousin features
(:mod:`citefinder.rank.relatives`) can be replayed offline from the run's lists (``bench/autofill.py fit --terms``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def cmd_papers(run: Path) -> None:
    from citefinder.config import Settings
    from citefinder.library.store import Library

    data = json.loads(run.read_text())
    stem = Path(data["bib"]).stem
    out: dict[str, dict[str, Any]] = {}
    for paper in data["papers"]:
        folder = Path(data["libraries"]) / f"{paper}-{stem}"
        enriched = list(folder.parent.glob(f"{paper}-{stem}-from-*"))
        if data.get("enriched") and enriched:
            folder = enriched[0]
        library = Library.open(Settings().with_overrides(library=folder))
        out[paper] = {p.doc_id: {"title": p.title, "authors": list(p.authors), "year": p.year,
                                 "abstract": p.abstract, "key": p.key} for p in library.iter_papers()}
    side = run.with_suffix(".papers.json")
    side.write_text(json.dumps(out))
    print(f"wrote {side}: {sum(len(v) for v in out.values())} papers of {len(out)} libraries")


def cmd_slots(runs: list[Path]) -> None:
    from autofill import rows

    for run in runs:
        rs = [r for r in rows(run) if r["feats"]]
        by: dict[tuple[int, int], list[bool]] = defaultdict(list)
        for r in rs:
            f = r["feats"]
            by[(int(f.get("cousin", 0)), int(f.get("cousin_untold", 0)))].append(r["top1"] in r["gold"])
        print(f"{run.name}: {len(rs)} slots")
        for (c, u), v in sorted(by.items()):
            print(f"  runner-up cousin={c} untold={u}: {len(v)} slots, top-1 right {sum(v) / len(v):.1%}")


def cmd_tilt(before: Path, after: Path) -> None:
    """hit@1 of the fused ranking per paper, before -> after (answerable slots)."""
    def per_paper(path: Path) -> dict[str, tuple[int, int]]:
        data = json.loads(path.read_text())
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in data["outcomes"]:
            if not o["gold"]:
                continue
            p = o["id"].split(":")[0]
            out[p][1] += 1
            out[p][0] += int((o.get("gold_rank") or {}).get("fused") == 1)
        return {k: (v[0], v[1]) for k, v in out.items()}

    b, a = per_paper(before), per_paper(after)
    print("| paper | answerable | R@1 refs.bib | R@1 enriched | change |\n|---|---|---|---|---|")
    worst = float("inf")
    for p in sorted(b):
        rb, ra = b[p][0] / b[p][1], a[p][0] / a[p][1]
        worst = min(worst, ra - rb)
        print(f"| {p} | {b[p][1]} | {rb:.1%} | {ra:.1%} | {100 * (ra - rb):+.1f} |")
    nb, na = sum(x[0] for x in b.values()), sum(x[0] for x in a.values())
    n = sum(x[1] for x in b.values())
    print(f"| **all** | {n} | {nb / n:.1%} | {na / n:.1%} | {100 * (na - nb) / n:+.1f} |")
    print(f"worst change {100 * worst:+.1f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("papers").add_argument("run", type=Path)
    sub.add_parser("slots").add_argument("runs", nargs="+", type=Path)
    t = sub.add_parser("tilt")
    t.add_argument("before", type=Path)
    t.add_argument("after", type=Path)
    args = p.parse_args()
    from citefinder.config import offline_environment

    offline_environment()
    if args.cmd == "papers":
        cmd_papers(args.run)
    elif args.cmd == "slots":
        cmd_slots(args.runs)
    else:
        cmd_tilt(args.before, args.after)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
