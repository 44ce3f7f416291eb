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
    p.add_argument("what", choices=("enrich", "discover", "serve"))
    p.add_argument("--literature", type=Path, required=True)
    p.add_argument("--part", choices=("train", "test"), default="test")
    p.add_argument("--services", default="openalex,s2,arxiv,crossref")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    if args.what == "serve":
        return serve(args)
    result = enrich(args) if args.what == "enrich" else discover(args)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
