"""The online sources measured against the local literature library they stand beside (issue 38): the fake of the
four scholarly APIs (tests/online_server.py) answers on loopback from a literature library folder built from
papers-333k, so every difference from the local figures is the services' own (their query forms, what each holds,
their answer shapes), and the calls and times are counted with a cold and a warm cache.

    python bench/online_eval.py enrich --literature /work/lit/papers-333k --part test --out bench/out/online-enrich.json
    python bench/online_eval.py discover --literature /work/lit/papers-333k --part test --out bench/out/online-disc.json
    python bench/online_eval.py serve --literature /work/lit/papers-333k     # the fake alone, its URLs printed

``enrich``: every entry of the part's ``refs.bib`` files that lacks an abstract or an id, matched by
``find_same`` in the local library and in each service; per service: found, the same work and the same abstract as
the local match, ambiguous, and the entries whose outcome differs (with why); calls and seconds cold and warm.
``discover``: each slot of the part whose cited paper is in papers-333k, its sentence searched in the local library
and in each service (k = 10): the gold in the top 10 and first; calls and seconds cold and warm. The fake answers
at once: the real services' pace (0.1 s, 1 s, 3 s, 0.1 s between calls) is added as calls x interval.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/data"
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

PACE = {"openalex": 0.1, "s2": 1.0, "arxiv": 3.0, "crossref": 0.1}


class LocalCatalog:
    """The fake's four questions answered by a literature library folder (read only)."""

    def __init__(self, local: Any) -> None:
        self.local = local

    @staticmethod
    def _dict(paper: Any) -> dict:
        return {"doc_id": paper.doc_id, "title": paper.title, "abstract": paper.abstract,
                "authors": list(paper.authors), "year": paper.year, "venue": paper.venue, "arxiv_id": paper.arxiv_id,
                "doi": paper.doi}

    def _ask(self, by: str, values: list[str]) -> list[dict]:
        from citefinder.sources.base import Lookup

        answers = self.local.lookup([Lookup(by, v) for v in values])  # type: ignore[arg-type]
        return [self._dict(r.paper) for rs in answers for r in rs]

    def by_doi(self, dois: list[str]) -> list[dict]:
        from citefinder.library.identity import arxiv_id_from_doi, normalize_doi

        # papers-333k carries no DOIs; an arXiv DOI names its arXiv paper, as the services hold it
        arxiv = [a for a in (arxiv_id_from_doi(x) for x in dois) if a]
        return self._ask("doi", [d for d in (normalize_doi(x) for x in dois) if d]) + (self.by_arxiv(arxiv) if arxiv
                                                                                       else [])

    def by_arxiv(self, ids: list[str]) -> list[dict]:
        from citefinder.library.identity import normalize_arxiv_id

        return self._ask("arxiv", [a for a in (normalize_arxiv_id(x) for x in ids) if a])

    def by_title(self, title: str, k: int) -> list[dict]:
        return self._ask("title", [title])[:k]

    def search(self, text: str, k: int) -> list[dict]:
        return [self._dict(r.paper) for r in self.local.search(text, k)]

    def titled(self, text: str, k: int) -> list[dict]:
        out = self.by_title(text, k)
        seen = {r["doc_id"] for r in out}
        return out + [r for r in self.search(text, k) if r["doc_id"] not in seen][: k - len(out)]


def start(literature: Path) -> tuple[Any, Any]:
    from citefinder.sources.local import LocalLiterature
    from online_server import FakeScholar

    local = LocalLiterature.open(literature)
    return local, FakeScholar(LocalCatalog(local))  # type: ignore[arg-type]


def online(fake: Any, service: str, cache: Path) -> Any:
    from citefinder.config import Settings
    from citefinder.sources.registry import open_source

    settings = Settings(online_interval_s=0.0, sources_cache=cache, online_timeout_s=60, **fake.urls())
    return open_source(service, settings)


def entries(part: str) -> list[Any]:
    from citefinder.library.readers import read_papers
    from citefinder.sources.enrich import lacks

    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    out = []
    for name in split[part]:
        papers = [p for p in read_papers(DATA / "drafts-dev" / name / "refs.bib") if hasattr(p, "doc_id")]
        out += [p for p in papers if lacks(p)]
    return out


def _same(a: Any, b: Any) -> bool:
    from citefinder.library.identity import normalize_title

    return a.doc_id == b.doc_id or normalize_title(a.title) == normalize_title(b.title)


def enrich(args: argparse.Namespace) -> dict:
    from citefinder.sources.same import find_same

    papers = entries(args.part)
    local, fake = start(args.literature)
    t0 = time.perf_counter()
    base = find_same(local, papers)
    out: dict[str, Any] = {"entries": len(papers), "local": {
        "found": sum(m.found is not None for m in base), "ambiguous": sum(bool(m.ambiguous) for m in base),
        "with_abstract": sum(bool(m.found and m.found.paper.abstract) for m in base),
        "seconds": round(time.perf_counter() - t0, 1)}}
    for service in args.services.split(","):
        cache = Path(tempfile.mkdtemp()) / "cache.sqlite"
        row: dict[str, Any] = {}
        for run in ("cold", "warm"):
            before, t0 = len(fake.seen), time.perf_counter()
            matches = find_same(online(fake, service, cache), papers)
            row[run] = {"calls": len(fake.seen) - before, "seconds": round(time.perf_counter() - t0, 1)}
        row["cold"]["seconds_at_pace"] = round(row["cold"]["seconds"] + row["cold"]["calls"] * PACE[service], 1)
        diffs = []
        agree = same_abstract = 0
        for paper, mine, theirs in zip(papers, matches, base, strict=True):
            if (mine.found is None) != (theirs.found is None) or bool(mine.ambiguous) != bool(theirs.ambiguous):
                diffs.append({"title": paper.title[:90], "local": _outcome(theirs), service: _outcome(mine)})
            elif mine.found is not None and theirs.found is not None:
                agree += _same(mine.found.paper, theirs.found.paper)
                same_abstract += mine.found.paper.abstract == " ".join(theirs.found.paper.abstract.split())
        row.update(found=sum(m.found is not None for m in matches), ambiguous=sum(bool(m.ambiguous) for m in matches),
                   with_abstract=sum(bool(m.found and m.found.paper.abstract) for m in matches),
                   same_work_as_local=agree, same_abstract_as_local=same_abstract, differ=len(diffs),
                   differences=diffs[:40])
        out[service] = row
        print(service, {k: v for k, v in row.items() if k != "differences"}, file=sys.stderr, flush=True)
    fake.close()
    return out


def _outcome(match: Any) -> str:
    if match.ambiguous:
        return f"ambiguous ({len(match.ambiguous)})"
    if match.found is None:
        return "not found"
    return f"found {match.found.paper.doc_id} by {match.via}"


def discover(args: argparse.Namespace) -> dict:
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    part = set(split[args.part])
    slots = [row for line in (DATA / "drafts-dev/contexts.jsonl").read_text().splitlines()
             if (row := json.loads(line))["paper"] in part and row.get("doc_ids")]
    local, fake = start(args.literature)

    def hits(records: list[Any], row: dict) -> int | None:
        from citefinder.library.identity import normalize_title

        gold = {normalize_title(t) for t in row["titles"]}
        return next((i for i, r in enumerate(records, 1) if r.paper.doc_id in row["doc_ids"]
                     or normalize_title(r.paper.title) in gold), None)

    def score(search: Any) -> dict:
        ranks = [hits(search(row["sentence"], args.k), row) for row in slots]
        return {"R@1": round(sum(r == 1 for r in ranks) / len(ranks), 3),
                "R@10": round(sum(r is not None and r <= 10 for r in ranks) / len(ranks), 3)}

    t0 = time.perf_counter()
    out: dict[str, Any] = {"slots": len(slots), "local": {**score(local.search), "seconds":
                                                          round(time.perf_counter() - t0, 1)}}
    for service in args.services.split(","):
        cache = Path(tempfile.mkdtemp()) / "cache.sqlite"
        row: dict[str, Any] = {}
        for run in ("cold", "warm"):
            before, t0 = len(fake.seen), time.perf_counter()
            figures = score(online(fake, service, cache).search)
            row[run] = {**figures, "calls": len(fake.seen) - before, "seconds": round(time.perf_counter() - t0, 1)}
        row["cold"]["seconds_at_pace"] = round(row["cold"]["seconds"] + row["cold"]["calls"] * PACE[service], 1)
        out[service] = row
        print(service, row, file=sys.stderr, flush=True)
    fake.close()
    return out


class Counted:
    """A literature search whose calls to the fake are counted (``last_calls``: what its last ``rank`` sent)."""

    def __init__(self, search: Any, fake: Any) -> None:
        self.search, self.fake, self.name = search, fake, search.name
        self.last_calls = 0

    def rank(self, query: Any) -> Any:
        before = len(self.fake.seen)
        try:
            return self.search.rank(query)
        finally:
            self.last_calls = len(self.fake.seen) - before


class Prefix:
    """A source asked once per text for ``depth`` records, answering any ``k`` <= depth with its first k (a
    relevance-sorted search's top k is the top of its top ``depth``): the variants share one call per slot."""

    def __init__(self, source: Any, depth: int) -> None:
        self.source, self.depth = source, depth
        self.name, self.sends = source.name, source.sends

    def lookup(self, queries: Any) -> Any:
        return self.source.lookup(queries)

    def search(self, text: str, k: int) -> list[Any]:
        return self.source.search(text, self.depth)[:k]


def memo_embedder(settings: Any) -> Any:
    """An embedder that encodes each text once (the variants embed the same records again and again)."""
    from citefinder.library.encoders.embedder import Embedder

    class Memo(Embedder):
        seen: dict[str, Any] = {}

        def encode(self, texts: Any, *, progress: Any = None) -> Any:
            import numpy as np

            todo = [t for t in dict.fromkeys(texts) if t not in self.seen]
            if todo:
                self.seen.update(zip(todo, super().encode(todo), strict=True))
            return np.stack([self.seen[t] for t in texts]) if texts else super().encode([])

    return Memo(settings.embedder, settings.embed_max_seq_length, settings.embed_batch_size)


def variant(settings: Any, source: Any, library: Any, *, k: int, weight: float, send: str,
            embedder: Any) -> Any:
    """A tier over ``source`` asking ``k`` records, the source's order fused at ``weight``, sending the slot's
    ``send`` ("window": as shipped; "focus": the slot's own part of its sentence, what the local BM25 searches;
    "text": its sentence)."""
    from dataclasses import replace

    import citefinder.pipeline.literature as lit

    class Tuned(lit.SourceLiterature):
        def rank(self, query: Any) -> Any:
            shipped = lit.SOURCE_WEIGHT
            lit.SOURCE_WEIGHT = weight  # the shipped code path, with the weight tried
            try:
                asked = query if send == "window" else replace(query, window=getattr(query, send))
                return super().rank(asked)
            finally:
                lit.SOURCE_WEIGHT = shipped

    return lit.LiteratureTier(Tuned(settings, source, embedder=embedder, k=k), library, when="always",
                              threshold=settings.confidence_threshold, shown=10)


GRID_K = (10, 30, 50, 100)
GRID_W = (0.0, 0.3, 1.0, 3.0)
GRID_SEND = ("window", "focus")


def tier(args: argparse.Namespace) -> dict:
    """The literature tier with an online source, through the shipped path (``open_literature`` of the source,
    as ``fill --literature s2`` opens it), on drafts-dev's part: bench/literature_eval.py's figures, the calls
    and seconds cold (a fresh cache) and warm (each slot asked again), and the grid of variants."""
    import literature_eval

    from citefinder.config import Settings
    from citefinder.pipeline.literature import open_literature

    local, fake = start(args.literature)
    out: dict[str, Any] = {}
    for service in args.services.split(","):
        cache = Path(tempfile.mkdtemp()) / "cache.sqlite"
        source = online(fake, service, cache)
        grid = online(fake, service, Path(tempfile.mkdtemp()) / "cache.sqlite")
        settings = Settings()
        memo = memo_embedder(settings) if args.grid else None

        def make(settings: Any, library: Any, source: Any = source) -> Counted:
            return Counted(open_literature(source, settings, embedder=library.embedder), fake)

        def variants(library: Any, grid: Any = grid, memo: Any = memo, settings: Any = settings) -> dict[str, Any]:
            if not args.grid:
                return {}
            deep = Prefix(grid, max(GRID_K))
            out = {f"k{k}-w{w}-{send}": variant(settings, deep, library, k=k, weight=w, send=send, embedder=memo)
                   for k in GRID_K for w in GRID_W for send in GRID_SEND}
            out["k30-w0.3-window-nodense"] = variant(settings, deep, library, k=30, weight=0.3, send="window",
                                                     embedder=None)
            return out

        before = len(fake.seen)
        result = literature_eval.drafts(args, make_search=make, variants=variants)
        result["service"] = service
        result["calls_all"] = len(fake.seen) - before
        rows = result["rows"]
        result["cold"] = {"calls": sum(r["calls"] for r in rows), "tier_s": sum(r["lit_s"] for r in rows),
                          "engine_s": sum(r["own_s"] for r in rows),
                          "paced_wait_s": paced_wait(rows, PACE[service])}
        result["warm"] = {"calls": sum(r["calls_warm"] for r in rows), "tier_s": sum(r["lit_warm_s"] for r in rows),
                          "same_papers": sum(r["warm_same"] for r in rows)}
        print(service, result["summary"], result["cold"], result["warm"], file=sys.stderr, flush=True)
        out[service] = result
    fake.close()
    return out


def paced_wait(rows: list[dict], interval_s: float) -> float:
    """What the service's pace would have added to the cold run: the slots run one after another (the engine,
    then the tier); each call that is sent waits until ``interval_s`` after the one before it."""
    now, last, waited = 0.0, float("-inf"), 0.0
    for r in rows:
        now += r["own_s"]
        if r["calls"]:
            wait = max(0.0, last + interval_s - now)
            waited, now, last = waited + wait, now + wait, now + wait
        now += r["lit_s"] + r.get("lit_warm_s", 0.0)
    return waited


def serve(args: argparse.Namespace) -> None:
    _, fake = start(args.literature)
    print(json.dumps(fake.urls()), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("enrich", "discover", "tier", "serve"))
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--part", choices=("train", "test"), default="test")
    p.add_argument("--services", default="openalex,s2,arxiv,crossref")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--out", type=Path)
    # tier: bench/literature_eval.py's drafts options
    p.add_argument("--papers")
    p.add_argument("--bib", default="refs.bib")
    p.add_argument("--libraries", type=Path, default=ROOT / "bench/out/drafts-libs")
    p.add_argument("--query-encoder")
    p.add_argument("--grid", action="store_true", help="tier: also score the variants (GRID_K x GRID_W x GRID_SEND)")
    args = p.parse_args()
    args.warm = True
    if args.what == "serve":
        return serve(args)
    result = {"enrich": enrich, "discover": discover, "tier": tier}[args.what](args)
    text = json.dumps(result, indent=1, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    if args.what == "tier":  # the rows stay in --out
        text = json.dumps({s: {k: v for k, v in r.items() if k not in ("rows", "outcomes", "libraries_seen")}
                           for s, r in result.items()}, indent=1, default=str)
    print(text)


if __name__ == "__main__":
    main()
