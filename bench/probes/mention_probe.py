"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: a draft-wide "mentioned" prior (papers whose names or first author recur anywhere in the draft).

    python bench/probes/mention_probe.py bench/out/drafts-train.json OUT.json   # then: python bench/tune.py fusion --dry-run OUT.json

Adds the same "mentioned" ranked list to every slot of a draft, so the fusion tuner can weigh it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import drafts  # noqa: E402


def main() -> int:
    from citefinder.index.names import _TOKEN, normalize_name, paper_names
    from citefinder.library.identity import fold, surname

    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    result = json.loads(src.read_text())
    for draft in drafts(result):
        library, outs, text = draft.library, draft.outcomes, draft.text
        tokens = Counter(normalize_name(t) for t in _TOKEN.findall(text))
        words = Counter(fold(w) for w in re.findall(r"[A-Za-zÀ-ž'-]+", text))
        scores: dict[str, float] = {}
        for paper in library.iter_papers():
            s = sum(w * math.log1p(tokens.get(k, 0)) for k, w in paper_names(paper).items() if w >= 1.0)
            if paper.authors:
                s += 0.5 * math.log1p(words.get(fold(surname(paper.authors[0])), 0))
            if s > 0:
                scores[paper.doc_id] = s
        order = sorted(scores, key=lambda d: -scores[d])[:100]
        ranked = [[d, i, round(scores[d], 4)] for i, d in enumerate(order, start=1)]
        for o in outs:
            o["lists"]["mentioned"] = ranked
        print(f"{draft.name}: {len(scores)} papers mentioned", file=sys.stderr)
    dst.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
