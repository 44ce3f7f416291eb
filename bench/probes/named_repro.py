"""The named-work cases of issues 43 and 44, reproduced as a new user has them (no citation-context pack):
a .bib imported into a fresh library, a short draft filled, each slot's top candidates, its pick and why.

    python bench/probes/named_repro.py BIB DRAFT [--libraries DIR] [--literature FOLDER]

BIB may be several, comma-separated (each gets its own library). Prints one block per slot.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("bibs")
    p.add_argument("draft", type=Path)
    p.add_argument("--libraries", type=Path, default=Path("bench/out/named-repro"))
    p.add_argument("--literature", help="a literature library folder searched beside (read-only)")
    args = p.parse_args()

    from citefinder.config import Settings, offline_environment
    from citefinder.evaluate.drafts import open_draft_library
    from citefinder.pipeline.literature import literature_tier
    from citefinder.pipeline.pipeline import Pipeline

    offline_environment()
    text = args.draft.read_text(encoding="utf-8")
    embedder = None
    for bib in (Path(b) for b in args.bibs.split(",")):
        folder = args.libraries / f"{bib.stem}-{hashlib.sha1(bib.read_bytes()).hexdigest()[:8]}"
        settings = Settings()
        library = open_draft_library(settings, bib, folder, embedder)
        embedder = library.embedder
        tier = literature_tier(library.settings, library, args.literature) if args.literature else None
        pipeline = Pipeline(library.settings, library, literature=tier)
        print(f"== {bib.name}: {library.count()} papers")
        for r in pipeline.cite_text(text):
            sel = r.selection
            print(f"-- {r.slot.sentence if r.slot else r.query.text}")
            print(f"   names: {list(r.query.names)[:4]}")
            for n, c in enumerate(r.candidates[:3], 1):
                print(f"   {n}. {c.paper.title[:90]}")
            picked = sel.paper.title[:80] if sel.paper else "-"
            print(f"   => {sel.status} {picked} ({sel.confidence:.2f}, {sel.method})")
            trace = r.trace("select")
            if trace is not None and trace.details.get("named"):
                print(f"   named: {trace.details['named']}")
            for n, c in enumerate(r.literature[:3], 1):
                print(f"   lit {n}. {c.paper.title[:90]}")


if __name__ == "__main__":
    main()
