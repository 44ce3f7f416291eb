"""Issue 51: do the entries CiteFinder writes for literature papers read right in BibTeX? A seeded sample of a
literature file's records (keys and own entries dropped, so every entry is generated), written by
:func:`citefinder.library.bibtex.papers_to_bibtex`, parsed by bibtexparser v2 and by TeX Live's ``bibtex`` (plain and
abbrv). Counted: bibtexparser failures, bibtex errors and warnings, persons called "et al.", keys of digits alone,
keys equal but for case, and entries holding a Greek letter or math symbol as a bare character (pdflatex with
inputenc stops on it: "Unicode character α not set up").

    python bench/bibwriter_check.py [--records ../shared/data/papers-50k.jsonl.gz] [--n 5000]
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, default=Path("../shared/data/papers-50k.jsonl.gz"))
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=51)
    args = ap.parse_args()
    import bibtexparser
    from bibtexparser.middlewares.names import split_multiple_persons_names

    from citefinder.library.bibtex import papers_to_bibtex
    from citefinder.library.readers import read_papers
    from citefinder.types import Paper

    papers = [replace(p, key=None, bibtex=None) for p in read_papers(args.records) if isinstance(p, Paper)]
    papers = random.Random(args.seed).sample(papers, min(args.n, len(papers)))
    bib, keys = papers_to_bibtex(papers)
    library = bibtexparser.parse_string(bib)
    entries = library.entries
    et_al = sum(1 for e in entries if "author" in e.fields_dict
                for n in split_multiple_persons_names(e["author"]) if re.search(r"\bet\.?\s*al\b", n, re.I))
    math_chars = re.compile(r"[\u0370-\u03ff\u2190-\u21ff\u2200-\u22ff\u2113]")
    bare = sum(1 for e in entries if math_chars.search(" ".join(str(f.value) for f in e.fields)))
    folded = [k.casefold() for k in keys.values()]
    print(f"records {len(papers)}, entries {len(entries)}, bibtexparser failed blocks {len(library.failed_blocks)}, "
          f"persons called 'et al.' {et_al}, entries with a bare Greek letter or math symbol {bare}, keys of digits "
          f"alone {sum(k.isdigit() for k in keys.values())}, keys equal but for case "
          f"{len(set(keys.values())) - len(set(folded))}")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "x.bib").write_text(bib, encoding="utf-8")
        for style in ("plain", "abbrv"):
            (Path(tmp) / "x.aux").write_text(f"\\citation{{*}}\n\\bibdata{{x}}\n\\bibstyle{{{style}}}\n")
            run = subprocess.run(["bibtex", "x"], cwd=tmp, capture_output=True, text=True, errors="replace")
            blg = (Path(tmp) / "x.blg").read_text(encoding="utf-8", errors="replace")
            errors = re.search(r"\(There (?:was|were) (\d+) error", blg)
            warnings = len(re.findall(r"^Warning--", blg, re.M))
            print(f"bibtex {style}: exit {run.returncode}, errors {errors.group(1) if errors else 0}, "
                  f"warnings {warnings}")
            for line in [x for x in blg.splitlines() if x.startswith("Warning--") or "error" in x][:5]:
                print("   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
