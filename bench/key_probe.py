"""Probe: do the user's own BibTeX keys name what a slot cites ("devlin2019bert", "lama", "mnist")?

    python bench/key_probe.py bench/out/drafts-train.json [OUT.json]   # then: bench/tune.py fusion --dry-run OUT.json

A key's parts (letter runs of 3 or more, CamelCase split) that are not an author's surname, a title
word or a generic word are the key's extra names. Counts the training slots whose six words before
the marker hold an extra name of a gold paper's key, of another paper's key, and how many of the
slots such a match would newly put right (the shipped fusion's top 1 is not gold, and only gold keys
match). An upper bound on what a "key names" agent could add; offline from a drafts_eval output.
With OUT, writes a copy of the output with a "keys" ranked list per slot (the named papers, most
matching names first) for the fusion tuner.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from probe_support import DATA, drafts  # noqa: E402

GENERIC = frozenset(
    "the and for with from via using towards deep learning neural network networks model models arxiv preprint "
    "proceedings conference journal inproceedings article misc online web page url".split())


def extra_names(key: str, authors: tuple[str, ...], title: str) -> set[str]:
    surnames = {re.sub("[^a-z]", "", a.split()[-1].lower()) for a in authors if a.split()}
    title_words = {w.lower() for w in re.findall("[A-Za-z]+", title)}
    out = set()
    for run in re.findall("[A-Za-z]+", key):
        for part in [*re.findall("[A-Z]?[a-z]+|[A-Z]+(?![a-z])", run), run]:
            word = part.lower()
            if len(word) >= 3 and word not in surnames | title_words | GENERIC and not word.startswith("et"):
                out.add(word)
    return out


def main() -> int:
    from citefinder.fuse import fuse, learned_fusion
    from citefinder.library.dedupe import normalize_title
    from citefinder.library.formats.bib import read_bib
    from citefinder.types import Hit, Paper

    result = json.loads(Path(sys.argv[1]).read_text())
    fusion = learned_fusion("slots")
    slots = gold_named = only_gold = other_named = newly_right = 0
    for draft in drafts(result):
        starts = [m.start() for m in re.finditer(r"\[CITATION\]", draft.text)]
        # the keys as the user wrote them (this bench's libraries were built before keys were stored)
        # (joined by title: their ids came from an older import)
        keys: dict[str, set[str]] = {}
        for p in read_bib(DATA / draft.name / "refs-enriched.bib"):
            if isinstance(p, Paper):
                keys.setdefault(normalize_title(p.title), set()).add(p.key or "")
        names = {p.doc_id: set().union(*(extra_names(k, p.authors, p.title)
                                         for k in keys.get(normalize_title(p.title), ())))
                 for p in draft.library.iter_papers()}
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
                    fused = fuse({a: [Hit(*h) for h in hits] for a, hits in o["lists"].items()}, fusion)
                    newly_right += not fused or fused[0][0] not in gold
    print(f"{slots} answerable slots: a gold key's extra name before the marker {gold_named}, "
          f"only gold keys named {only_gold} (newly right {newly_right}), another key named {other_named}")
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
