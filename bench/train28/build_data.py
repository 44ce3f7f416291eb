"""Build the compact training/evaluation file for the query encoder and the cross-encoder (issue 28).

    python bench/train28/build_data.py --out .gpu/data.json.xz

One xz-compressed JSON object, read by bench/train28/gpu_train.py on the GPU machine (or the CPU):
- ``docs``: every cited paper of the pack, by the pack's doc key, as the library embeds it
  (``records.embedding_text``: title, plus the papers-333k abstract where its ``doc_id`` gives one);
- ``pairs``: every pack record with a usable query, train and test split, each with the dense agent's
  query text (``pack_query``), its doc, citing paper, the cite command's and the sentence's docs (never
  negatives), a validation flag (5% of the *training* citing papers, by a stable hash: the model is
  chosen on these, never on the test split) and the BM25 top 20 over all docs (hard negatives for the
  cross-encoder, as the engine's lexical agent sees them);
- ``drafts``: the drafts-dev papers (bench/drafts_split.json part), each slot's dense query text and
  gold keys against the paper's own refs-enriched.bib and refs.bib entries.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared/data"
VALIDATION = 0.05
SEED = 28


from citefinder.train.embedder.pack import read_records as READ_RECORDS  # noqa: E402 - kept before any patching

LIMIT: int | None = None  # --limit: the first N pack records only (a smoke test of the GPU script)


def _records() -> list[dict]:
    from itertools import islice

    return list(islice(READ_RECORDS([DATA / "cite-contexts/contexts.jsonl.gz"]), LIMIT))


def _queries() -> dict[str, str]:
    """``pack_query`` of every pack text, on two processes (it is most of this script's time)."""
    from multiprocessing import Pool

    from citefinder.train.embedder.pack import pack_query

    unique = sorted({r["text"] for r in _records()})
    with Pool(2) as pool:
        known = dict(zip(unique, pool.map(pack_query, unique, chunksize=500), strict=True))
    print(f"{len(known)} queries", file=sys.stderr, flush=True)
    return known


def pack_part(split: str, known: dict[str, str]) -> list[dict]:
    import citefinder.train.embedder.pack as pack
    from citefinder.train.embedder.pack import held_out, load_pairs

    pack.pack_query = known.__getitem__  # type: ignore[assignment] # computed once, in parallel
    if LIMIT:
        pack.read_records = lambda paths: iter(_records())  # type: ignore[assignment]

    pairs = load_pairs([DATA / "cite-contexts/contexts.jsonl.gz"], split=split, papers=DATA / "papers-333k.jsonl.gz")
    return [
        {
            "q": p.query,
            "d": p.doc,
            "t": p.doc_text,
            "c": p.citing,
            "g": sorted(p.gold),
            "s": sorted(p.sentence),
            "a": p.has_abstract,
            "split": split,
            "val": split == "train" and held_out(p.citing, VALIDATION, SEED),
        }
        for p in pairs
    ]


def drafts() -> list[dict]:
    from citefinder.library.formats.bib import read_bib
    from citefinder.library.records import embedding_text
    from citefinder.retrieve.agents.dense import dense_text
    from citefinder.retrieve.query.reformulate import reformulate
    from citefinder.text.slots import find_slots
    from citefinder.types import Paper

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    out = []
    for part in ("train", "test"):
        for name in split[part][:2] if LIMIT else split[part]:
            folder = DATA / "drafts-dev" / name
            text = (folder / "draft.txt").read_text(encoding="utf-8")
            gold = [json.loads(x)["keys"] for x in (folder / "gold.jsonl").read_text().splitlines() if x.strip()]
            slots = find_slots(text)
            assert len(slots) == len(gold), name
            refs = {}
            for bib in ("refs-enriched.bib", "refs.bib"):
                refs[bib] = {p.key: embedding_text(p) for p in read_bib(folder / bib) if isinstance(p, Paper) and p.key}
            out.append(
                {
                    "paper": name,
                    "part": part,
                    "queries": [dense_text(reformulate(s)[0]) for s in slots],
                    "gold": gold,
                    "refs": refs,
                }
            )
    return out


def bm25_top(pairs: list[dict], docs: dict[str, str], k: int = 20) -> None:
    import bm25s
    import numpy as np

    keys = list(docs)
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([docs[d] for d in keys], stopwords="en", show_progress=False), show_progress=False)
    queries = bm25s.tokenize([p["q"] for p in pairs], stopwords="en", show_progress=False)
    ids, _ = retriever.retrieve(queries, k=k, show_progress=False, n_threads=2)
    for p, row in zip(pairs, np.asarray(ids), strict=True):
        p["bm"] = [keys[int(i)] for i in row]


def compact(data: dict) -> dict:
    """Doc keys as indexes into ``docs`` (a list of [key, text]); training pairs keep the BM25 top 10 (hard
    negatives), held-out ones the top 20 (the rerank evaluation's candidates). What travels to the GPU machine
    is at most 64 MiB, the base model's 44 MB included."""
    keys = list(data["docs"])
    index = {k: i for i, k in enumerate(keys)}
    pairs = []
    for p in data["pairs"]:
        held = p["val"] or p["split"] == "test"
        pairs.append(
            {
                **p,
                "d": index[p["d"]],
                "g": [index[d] for d in p["g"] if d in index],
                "s": [index[d] for d in p["s"] if d in index],
                "bm": [index[d] for d in p["bm"][: 20 if held else 10]],
            }
        )
    return {"docs": [[k, data["docs"][k]] for k in keys], "pairs": pairs, "drafts": data["drafts"]}


def write(data: dict, out: Path) -> None:
    import lzma

    out.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(out, "wt", encoding="utf-8", preset=9) as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="the compact file (.json.xz)")
    ap.add_argument("--limit", type=int, help="only the first N pack records and 3 drafts (a smoke test)")
    ap.add_argument("--from", dest="source", type=Path, help="compact an uncompacted .json.gz of an earlier run")
    args = ap.parse_args()
    t0 = time.time()
    global LIMIT
    LIMIT = args.limit
    if args.source:
        with gzip.open(args.source, "rt", encoding="utf-8") as f:
            write(compact(json.load(f)), args.out)
        print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
        return 0
    known = _queries()
    pairs = pack_part("train", known) + pack_part("test", known)
    docs: dict[str, str] = {}
    for p in pairs:
        docs.setdefault(p["d"], p.pop("t"))
        p.pop("t", None)
    print(f"{len(pairs)} pairs, {len(docs)} docs in {time.time() - t0:.0f}s", file=sys.stderr)
    bm25_top(pairs, docs)
    print(f"bm25 done {time.time() - t0:.0f}s", file=sys.stderr)
    write(compact({"docs": docs, "pairs": pairs, "drafts": drafts()}), args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB) in {time.time() - t0:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
