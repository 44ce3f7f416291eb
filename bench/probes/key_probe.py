"""Backs bench/RESULTS.md, section "Fifth session (2026-11-23): the user's own citation keys (`keys` agent)".

Probe: do the user's own BibTeX keys name what a slot cites ("devlin2019bert", "lama", "mnist")?

    python bench/probes/key_probe.py bench/out/drafts-train.json [OUT.json]   # then: bench/tune.py fusion --dry-run OUT.json

A key's extra names are what the shipped `keys` agent reads (``citefinder.index.keys.key_names``:
the key's parts that are not an author's surname, a title word or a generic word). Counts the training
slots whose six words before the marker hold an extra name of a gold paper's key, of another paper's
key, and how many of the slots such a match would newly put right (the shipped fusion's top 1 without
a keys list is not gold, and only gold keys match). An upper bound on what the agent can add; offline from a drafts_eval
output whose libraries store keys (imported by this session's code).
With OUT, writes a copy of the output with a "keys" ranked list per slot (the named papers, most
matching names first) for the fusion tuner.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import drafts  # noqa: E402


def main() -> int:
    from citefinder.index.keys import key_names
    from citefinder.rank.fuse import fuse, learned_fusion
    from citefinder.types import Hit

    result = json.loads(Path(sys.argv[1]).read_text())
    fusion = learned_fusion("slots")
    slots = gold_named = only_gold = other_named = newly_right = 0
    for draft in drafts(result):
        starts = [m.start() for m in re.finditer(r"\[CITATION\]", draft.text)]
        papers = list(draft.library.iter_papers())
        assert any(p.key for p in papers), f"{draft.name}: its library stores no citation keys (re-import it)"
        names = {p.doc_id: key_names(p) for p in papers}
        for o in draft.outcomes:
            if not (o["answerable"] and o["gold"]):
                continue
            slots += 1
            start = starts[int(o["id"].rsplit(":", 1)[1])]
            before = draft.text[max(0, start - 200):start].replace("[CITATION]", " ")
            words = {w.lower() for w in re.findall("[A-Za-z]+", before)[-6:]}
            named = {d for d, n in names.items() if n & words}
            ranked = sorted(named, key=lambda d: -len(names[d] & words))
            o["lists"]["keys"] = [[d, r, float(len(names[d] & words))] for r, d in enumerate(ranked, start=1)]
            gold = set(o["gold"])
            other_named += bool(named - gold)
            if named & gold:
                gold_named += 1
                if named <= gold:
                    only_gold += 1
                    fused = fuse({a: [Hit(*h) for h in hits] for a, hits in o["lists"].items() if a != "keys"},
                                 fusion)
                    newly_right += not fused or fused[0][0] not in gold
    print(f"{slots} answerable slots: a gold key's extra name before the marker {gold_named}, "
          f"only gold keys named {only_gold} (newly right {newly_right}), another key named {other_named}")
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
