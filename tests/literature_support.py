"""A literature library folder built from ../shared/data (real Chroma store, bm25s; imported BM25-first, as a
dump is), the user's small library beside it, and the byte snapshot "never written" is checked against."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.types import Paper
from conftest import PAPERS_50K, read_jsonl

LITERATURE_SIZE = 400
OWN = 6  # the user's papers: the first records of the literature's file, so one of them is also in it


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and its bytes' digest: what 'never written' is checked against."""
    return {str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def as_paper(r: dict, key: str | None = None) -> Paper:
    return Paper(r["doc_id"], r["title"], tuple(r["authors"]), r["year"], r.get("venue"), r.get("abstract") or "",
                 arxiv_id=r.get("arxiv_id"), key=key)


def literature_records() -> list[dict]:
    """The literature's papers: the first records of papers-50k with authors and a year."""
    papers = read_jsonl(PAPERS_50K)[: LITERATURE_SIZE + 20]
    return [p for p in papers if p["authors"] and p["year"]][:LITERATURE_SIZE]


def own_records(records: list[dict]) -> list[dict]:
    """The user's papers: the first few of the literature's (so ``records[1]`` is in both) and its newest one (the
    tier's priors demote papers newer than anything the user has, citefinder/data/literature.json; with fewer
    than ``NEWEST_NEEDS`` dated papers, as here, they do not, and the newest one keeps it so either way)."""
    newest = max(records[OWN:], key=lambda r: r["year"])
    return records[: OWN - 1] + [newest]


def only_theirs(records: list[dict]) -> int:
    """The paper a test's draft names that only the literature holds (no newer than the user's newest)."""
    mine = {r["doc_id"] for r in own_records(records)}
    return next(i for i in range(200, len(records)) if records[i]["doc_id"] not in mine)


def build_literature(root: Path, records: list[dict]) -> Path:
    """A literature library imported BM25-first (no vectors), as a dump would be."""
    src = root / "dump.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    folder = root / "papers-lit"
    assert import_dump(folder, src) == len(records)
    return folder


def import_dump(folder: Path, dump: Path) -> int:
    """``dump`` imported BM25-first (no vectors) into a library at ``folder``; how many papers were added."""
    return Library.open(Settings(library=folder)).import_files([dump], defer_embedding=True).added


def own_library(folder: Path, records: list[dict]) -> Library:
    """The user's library: the first :data:`OWN` records (one of them is in the literature too), keyed
    ``Surname:Year``."""
    lib = Library.open(Settings(library=folder))
    lib.add_papers([as_paper(r, f"{r['authors'][0].split()[-1]}:{r['year']}") for r in own_records(records)],
                   defer_embedding=True)
    return lib


def literature_folder(root: Path, records: Path) -> Path:
    """A literature library folder in ``root`` imported BM25-first from a JSONL file of ``records``."""
    folder = root / "lit"
    Library.open(Settings(library=folder)).import_files([records], defer_embedding=True)
    return folder
