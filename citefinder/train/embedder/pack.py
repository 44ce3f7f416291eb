"""(citing sentence -> cited paper) pairs from a citation-context pack, for training and measuring an embedder.

A pack is JSONL (optionally gzipped), one record per (sentence, cited paper), in the schema of
``../shared/data/cite-contexts/README.md``: ``text`` with this citation as ``[CITATION]`` and other
citations as ``[OTHER]``, ``cited`` {title, year, authors, doc_id}, ``citing`` {paper}, ``group`` (one
cite command), ``split``.

- The query is what the dense agent would embed for that sentence in a draft: the sentence goes
  through :func:`~citefinder.text.slots.find_slots` (every marker a slot, this one kept) and
  :func:`~citefinder.retrieve.query.reformulate.reformulate`, then
  :func:`~citefinder.retrieve.agents.dense.dense_text`; training on another shape of text would teach
  the model a query it never sees.
- The positive is the cited paper as the library embeds it (:func:`~citefinder.library.records.embedding_text`):
  its title, plus its abstract when a papers file holds its ``doc_id``.
- Hard negatives are the other papers the same citing paper cites (same field, often the same
  sub-topic), never one the same sentence cites.
- Held-out data is split by citing paper, so no paper's sentences are on both sides.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from citefinder.library.identity import normalize_title
from citefinder.library.records import embedding_text
from citefinder.retrieve.agents.dense import dense_text
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.text.slots import find_slots
from citefinder.types import Paper

THIS, OTHER = "[CITATION]", "[OTHER]"


@dataclass(frozen=True)
class ContextPair:
    """One citing sentence and the paper it cites."""

    id: str
    query: str  # the dense agent's text for this sentence
    doc: str  # the cited paper: its doc_id, else "title:" + its normalised title
    doc_text: str  # what the embedder reads for the cited paper
    citing: str  # the citing paper (the unit of the held-out split and of hard negatives)
    gold: frozenset[str]  # every paper this cite command cites (``doc`` included): none is a negative
    sentence: frozenset[str]  # every paper cited anywhere in this sentence: never a hard negative
    has_abstract: bool


def read_records(paths: Iterable[Path]) -> Iterator[dict]:
    """Records of JSONL (or .jsonl.gz) packs, and of the user's LaTeX projects (a folder, a .zip, a .tex with
    its .bib: :func:`~citefinder.train.contexts.latex_pack`); a line that is not a JSON object is skipped."""
    from citefinder.train.contexts import is_latex_project, latex_pack

    for path in paths:
        if is_latex_project(Path(path)):
            yield from latex_pack([Path(path)])
            continue
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("text"), str) \
                        and isinstance(record.get("cited"), dict):
                    yield record


def pack_query(text: str) -> str:
    """The dense agent's query text for a pack sentence (its ``[CITATION]`` the slot, ``[OTHER]`` other slots)."""
    markers = [i for i in range(len(text)) if text.startswith(THIS, i) or text.startswith(OTHER, i)]
    mine = next((n for n, i in enumerate(markers) if text.startswith(THIS, i)), 0)
    slots = find_slots(text.replace(OTHER, THIS), 0, latex=False)
    if not slots:
        query, _ = reformulate(text.replace(OTHER, " "))
        return dense_text(query)
    query, _ = reformulate(slots[min(mine, len(slots) - 1)])
    return dense_text(query)


def load_abstracts(papers: Path | None, doc_ids: set[str]) -> dict[str, tuple[str, str]]:
    """``{doc_id: (title, abstract)}`` for the wanted ids from a JSONL(.gz) of papers (doc_id, title, abstract).

    Only lines naming a wanted id are parsed: 333k papers are scanned in seconds.
    """
    found: dict[str, tuple[str, str]] = {}
    if papers is None or not doc_ids:
        return found
    opener = gzip.open if str(papers).endswith(".gz") else open
    with opener(papers, "rt", encoding="utf-8") as f:
        for line in f:
            at = line.find('"doc_id": "')
            if at < 0:
                continue
            start = at + len('"doc_id": "')
            if line[start:line.find('"', start)] not in doc_ids:
                continue
            try:
                p = json.loads(line)
            except ValueError:
                continue
            found[str(p["doc_id"])] = (str(p.get("title") or ""), str(p.get("abstract") or ""))
    return found


def _doc_key(cited: dict) -> str:
    return str(cited.get("doc_id") or "") or "title:" + normalize_title(str(cited.get("title") or ""))


def load_pairs(
    paths: Sequence[Path],
    *,
    split: str | None = "train",
    sources: Sequence[str] | None = None,
    papers: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ContextPair]:
    """Every record of ``split`` (None: all) and of ``sources`` (None: all) as a pair; records without a usable
    title or query are dropped."""
    records = [r for r in read_records(paths) if (split is None or r.get("split") == split)
               and (not sources or r.get("source") in sources)]
    records = [r for r in records if normalize_title(str(r["cited"].get("title") or ""))]
    abstracts = load_abstracts(papers, {str(r["cited"]["doc_id"]) for r in records if r["cited"].get("doc_id")})
    by_group: dict[tuple[str, str], set[str]] = defaultdict(set)
    by_sentence: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        citing = str((r.get("citing") or {}).get("paper") or "")
        by_group[(citing, str(r.get("group") or r.get("id")))].add(_doc_key(r["cited"]))
        by_sentence[(citing, _bare(r["text"]))].add(_doc_key(r["cited"]))
    pairs: list[ContextPair] = []
    for n, r in enumerate(records, start=1):
        cited = r["cited"]
        citing = str((r.get("citing") or {}).get("paper") or "")
        doc = _doc_key(cited)
        title, abstract = abstracts.get(str(cited.get("doc_id") or ""), ("", str(cited.get("abstract") or "")))
        paper = Paper(doc, title or str(cited["title"]), abstract=abstract)
        query = pack_query(r["text"])
        if query.strip():
            pairs.append(ContextPair(
                str(r.get("id") or n), query, doc, embedding_text(paper), citing,
                frozenset(by_group[(citing, str(r.get("group") or r.get("id")))]),
                frozenset(by_sentence[(citing, _bare(r["text"]))]), bool(abstract)))
        if progress and n % 1000 == 0:
            progress(n)
    return pairs


def _bare(text: str) -> str:
    return " ".join(text.replace(THIS, " ").replace(OTHER, " ").lower().split())


def held_out(citing: str, fraction: float, seed: int) -> bool:
    """Whether a citing paper is held out: a stable hash, so adding records never moves a paper across."""
    digest = hashlib.md5(f"{seed}:{citing}".encode()).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF < fraction


def split_by_citing(
    pairs: Sequence[ContextPair], fraction: float, seed: int
) -> tuple[list[ContextPair], list[ContextPair]]:
    """(train, validation): the sentences of a seeded share of the citing papers are held out."""
    train = [p for p in pairs if not held_out(p.citing, fraction, seed)]
    return train, [p for p in pairs if held_out(p.citing, fraction, seed)]


def hard_negative_pool(pairs: Sequence[ContextPair]) -> dict[str, list[tuple[str, str]]]:
    """``{citing paper: [(doc, doc_text), ...]}``: the distinct papers each citing paper cites."""
    pool: dict[str, dict[str, str]] = defaultdict(dict)
    for p in pairs:
        pool[p.citing].setdefault(p.doc, p.doc_text)
    return {c: list(docs.items()) for c, docs in pool.items()}


def pick_hard_negative(
    pair: ContextPair, pool: dict[str, list[tuple[str, str]]], rng: random.Random
) -> tuple[str, str] | None:
    """One paper the same citing paper cites that this sentence does not (None when there is none)."""
    choices = [d for d in pool.get(pair.citing, []) if d[0] not in pair.sentence]
    return rng.choice(choices) if choices else None


def subsample(pairs: Sequence[ContextPair], n: int | None, seed: int) -> list[ContextPair]:
    """A seeded sample of ``n`` pairs (all when ``n`` is None or larger), in the original order."""
    if n is None or n >= len(pairs):
        return list(pairs)
    keep = set(random.Random(seed).sample(range(len(pairs)), n))
    return [p for i, p in enumerate(pairs) if i in keep]
