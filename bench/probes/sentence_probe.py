"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: do the slots of one sentence gain from a joint pick of distinct papers?

    python bench/probes/sentence_probe.py bench/out/drafts-train.json

"DBSCAN [CITATION] and HDBSCAN [CITATION]" rarely cites one paper twice. For every sentence holding
several slots (drafts-dev/contexts.jsonl), pick for each slot one of its top 3 fused candidates so that
no paper is picked twice and the sum of fused scores is highest; compare hit@1 with each slot's own
top 1. Offline from a drafts_eval output with the shipped learned fusion (training part only).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from citefinder.rank.fuse import fuse, learned_fusion  # noqa: E402
from citefinder.types import Hit  # noqa: E402

CONTEXTS = ROOT.parent / "shared/data/drafts-dev/contexts.jsonl"
DEPTH = 3


def main() -> int:
    outcomes = json.loads(Path(sys.argv[1]).read_text())["outcomes"]
    sentence = {}
    for line in CONTEXTS.read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        sentence[f"{c['paper']}:{c['slot']}"] = c["sentence"]
    fusion = learned_fusion("slots")
    fused = {o["id"]: fuse({n: [Hit(*h) for h in hits] for n, hits in (o.get("lists") or {}).items()}, fusion)
             for o in outcomes}
    groups: dict[tuple[str, str | None], list[dict]] = defaultdict(list)
    for o in outcomes:
        groups[(o["id"].rsplit(":", 1)[0], sentence.get(o["id"]))].append(o)
    scored = own = joint = shared_slots = 0
    for group in groups.values():
        tops = [fused[o["id"]][:DEPTH] for o in group]
        picks = [t[0][0] if t else None for t in tops]
        if len(group) > 1:
            shared_slots += len(group)
            best = -1.0
            for combo in itertools.product(*[range(len(t)) if t else [None] for t in tops]):
                chosen = [t[c][0] for t, c in zip(tops, combo, strict=True) if c is not None]
                if len(set(chosen)) < len(chosen):
                    continue
                value = sum(t[c][1] for t, c in zip(tops, combo, strict=True) if c is not None)
                if value > best:
                    best = value
                    picks = [t[c][0] if c is not None else None for t, c in zip(tops, combo, strict=True)]
        for o, pick in zip(group, picks, strict=True):
            if o["answerable"] and o["gold"]:
                scored += 1
                top = fused[o["id"]][0][0] if fused[o["id"]] else None
                own += top in o["gold"]
                joint += pick in o["gold"]
    print(f"{scored} answerable slots, {shared_slots} in sentences with several slots: "
          f"hit@1 own top 1 {own / scored:.4f}, joint distinct pick {joint / scored:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
