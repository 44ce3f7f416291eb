"""Writes this folder's fixtures from ../shared/data/papers-50k.jsonl.gz (run from the repository root):
literature.jsonl, the papers of papers-50k whose title says "metric learning" (a literature library's dump);
own.jsonl, eight of them as a user's keyless library; refs-s2.bib, the same eight as BibTeX under the keys
Semantic Scholar gives them (``Zheng2021DeepRM``), the style a user's keys must be read in."""

import gzip
import json
import os
from pathlib import Path

HERE = Path(__file__).parent
OWN = ["t:ceb2286a58b5e62e", "arxiv:1708.01682", "t:527db0d16945007c", "t:188c4a19cd686da4", "t:338bb6af1600cb9b",
       "t:c9daff1ae5e7baf7", "t:ae453fca86ef969e", "t:9552b941e1ba6901"]
S2_KEYS = {  # as semanticscholar.org's BibTeX export writes them
    "t:ceb2286a58b5e62e": "Zheng2021DeepRM", "arxiv:1708.01682": "Wang2017DeepML",
    "t:527db0d16945007c": "Wang2019MultiSimilarityLW", "t:188c4a19cd686da4": "Cakir2019DeepML",
    "t:338bb6af1600cb9b": "Roth2019MICMI", "t:c9daff1ae5e7baf7": "Elezi2020TheGL",
    "t:ae453fca86ef969e": "Roth2020RevisitingTS", "t:9552b941e1ba6901": "Gu2021ProxySL"}


def main() -> None:
    rows = []
    shared = Path(os.environ.get("CITEFINDER_SHARED_DATA", HERE.parents[2].parent / "shared" / "data"))
    with gzip.open(shared / "papers-50k.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "metric learning" in r["title"].lower() and r.get("authors") and r.get("year") and r.get("abstract"):
                rows.append({k: r[k] for k in ("doc_id", "title", "authors", "year", "venue", "abstract", "arxiv_id")})
    (HERE / "literature.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    own = [next(r for r in rows if r["doc_id"] == d) for d in OWN]
    (HERE / "own.jsonl").write_text("".join(json.dumps(r) + "\n" for r in own), encoding="utf-8")
    entries = [f"@article{{{S2_KEYS[r['doc_id']]},\n  title = {{{r['title']}}},\n  author = "
               f"{{{' and '.join(r['authors'])}}},\n  year = {{{r['year']}}}\n}}\n" for r in own]
    (HERE / "refs-s2.bib").write_text("\n".join(entries), encoding="utf-8")


if __name__ == "__main__":
    main()
