"""The embedding texts of a papers file (CiteFinder's JSON Lines), as JSON lines [doc_id, text] in three parts
(12%, 44%, 44%: the first travels beside the model), for bench/gpu/run333.py; compress each with xz after.

    python bench/gpu/prep333.py ../shared/data/papers-333k.jsonl.gz OUTDIR && xz -T2 -6 -k OUTDIR/part*.jsonl
"""
import gzip
import json
import sys
from pathlib import Path

from citefinder.library.records import embedding_text
from citefinder.types import Paper

source, out = Path(sys.argv[1]), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
rows = []
with gzip.open(source, "rt", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        p = Paper(r["doc_id"], r.get("title") or "", abstract=r.get("abstract") or "")
        rows.append(json.dumps([r["doc_id"], embedding_text(p)], ensure_ascii=False))
n = len(rows)
cuts = [0, n * 12 // 100, n * 56 // 100, n]
for i in range(3):
    (out / f"part{i}.jsonl").write_text("\n".join(rows[cuts[i]:cuts[i + 1]]) + "\n", encoding="utf-8")
print(n, cuts)
