"""The literature's own citation memory in the literature tier (issue 44): a literature library built with the
context pack's records for its papers (``contexts import`` into the literature folder when it is built) is
searched with the memory agents (cited-as, cited-like) and how often it cites each paper (a prior), read in place
without writing a byte; the named landmark papers (*Attention Is All You Need*, BERT) are offered first when the
user's library lacks them; and which slots ask the literature (:func:`needs_literature`).

The literature here is real: every papers-50k record whose title speaks of Transformers, BERT or attention (the
landmarks and hundreds of cousins: BERT's successors, speech-recognition Transformers, self-attention papers), and
the context pack's train-split sentences citing them (at most PER_PAPER per paper, in file order), both read
from ../shared/data."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from literature_support import literature_records, own_library, snapshot

from citefinder.cli.main import main
from citefinder.config import Settings
from citefinder.library.store import Library
from citefinder.pipeline.doubt import needs_literature
from citefinder.pipeline.literature import LibraryLiterature, LiteratureTier
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.text.slots import find_slots
from citefinder.types import Hit, Paper, Selection, SlotResult, StageTrace
from conftest import PAPERS_50K, SHARED_DATA

PACK = SHARED_DATA / "cite-contexts" / "contexts.jsonl.gz"
TITLES = re.compile(r"transformer|\bbert\b|self-attention|attention is all you need")
PER_PAPER = 12
ATTENTION, BERT = "arxiv:1706.03762", "arxiv:1810.04805"
LANDMARKS = [("The Transformer architecture [CITATION] relies entirely on self-attention.", ATTENTION),
             ("Pre-trained language models such as BERT [CITATION] have improved many NLP tasks.", BERT)]


@pytest.fixture(autouse=True)
def literature_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))


def _landmark_sources(root: Path) -> tuple[Path, Path]:
    """The literature's papers (a JSONL dump) and its context pack (train split), written under ``root``."""
    papers = []
    with gzip.open(PAPERS_50K, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if TITLES.search((r.get("title") or "").lower()):
                papers.append(line)
    ids = {json.loads(p)["doc_id"] for p in papers}
    per: Counter[str] = Counter()
    kept = []
    with gzip.open(PACK, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            cited = r["cited"]["doc_id"]
            if cited in ids and r["split"] == "train" and per[cited] < PER_PAPER:
                per[cited] += 1
                kept.append(line)
    dump, pack = root / "papers.jsonl", root / "contexts.jsonl"
    dump.write_text("".join(papers), encoding="utf-8")
    pack.write_text("".join(kept), encoding="utf-8")
    return dump, pack


@pytest.fixture(scope="module")
def landmarks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the literature built with its memory, the same literature without one)."""
    root = tmp_path_factory.mktemp("landmarks")
    dump, pack = _landmark_sources(root)
    for name in ("plain", "with-memory"):
        report = Library.open(Settings(library=root / name)).import_files([dump], defer_embedding=True)
        assert report.added > 1000
    # the literature library's memory, made when it is built (as its builder would: the CLI)
    assert main(["--library", str(root / "with-memory"), "contexts", "import", str(pack), "--split", "train"]) == 0
    return root / "with-memory", root / "plain"


@pytest.fixture
def mine(tmp_path: Path) -> Library:
    """The user's library: papers of another field, none of the landmarks."""
    return own_library(tmp_path / "mine", literature_records())


def _offered(tier: LiteratureTier, text: str) -> SlotResult:
    query, _ = reformulate(find_slots(text, 1)[0])
    empty = SlotResult(None, query, (), Selection("not_found"), ())
    return tier.extend(empty, top_confidence=0.0)


def test_the_landmarks_are_offered_first_from_the_literatures_own_memory(landmarks, mine):
    folder, plain = landmarks
    before = snapshot(folder)
    tier = LiteratureTier(LibraryLiterature(mine.settings, folder), mine, when="always")
    for text, gold in LANDMARKS:
        result = _offered(tier, text)
        assert result.literature[0].doc_id == gold, [c.paper.title for c in result.literature[:5]]
        agents = {t["agent"]: t for t in result.trace("literature").details["traces"] if t["kind"] == "retriever"}
        memory = [agents[name] for name in ("cited-as", "cited-like")]  # over the literature's memory
        assert all(t["status"] == "ok" for t in memory)
        assert any(gold in [h["doc_id"] for h in t["top"][:3]] for t in memory)
        assert result.trace("literature").details["cited"][gold] >= 1  # how often the literature cites it
    assert snapshot(folder) == before  # the memory too is read in place, never written

    without = LiteratureTier(LibraryLiterature(mine.settings, plain), mine, when="always")
    agents = {t["agent"]: t for t in _offered(without, LANDMARKS[0][0]).trace("literature").details["traces"]}
    assert agents["cited-as"]["status"] == "skipped" and "no citation-context memory" in agents["cited-as"]["message"]


def _result(status: str, confidence: float) -> SlotResult:
    query, _ = reformulate(find_slots("Residual connections ease training [CITATION].", 1)[0])
    paper = Paper("t:mine", "A paper of mine")
    select = StageTrace("select", top=(Hit(paper.doc_id, 1, confidence),))
    selection = Selection("found", paper, confidence) if status == "found" else Selection("not_found")
    return SlotResult(None, query, (), selection, (select,))


@pytest.mark.parametrize(("status", "confidence", "asks"), [
    ("found", 0.95, False),  # likely right: the user's own paper stands
    ("found", 0.60, True),  # filled, but unsure: its paper may be missing from the library
    ("found", 0.10, True),
    ("not_found", 0.95, True),  # nothing filled
])
def test_a_doubtful_pick_asks_the_literature(status, confidence, asks):
    assert needs_literature(_result(status, confidence)) is asks
    assert needs_literature(_result(status, confidence), threshold=0.99) is True


def test_unsure_mode_searches_a_filled_but_doubtful_slot(landmarks, mine):
    folder, _ = landmarks
    search = LibraryLiterature(mine.settings, folder)
    unsure = _result("found", 0.60)
    query, _ = reformulate(find_slots(LANDMARKS[1][0], 1)[0])
    unsure = SlotResult(None, query, (), unsure.selection, unsure.traces)
    asked = LiteratureTier(search, mine, threshold=0.55).extend(unsure, top_confidence=0.60)
    assert asked.trace("literature").status == "ok" and "unsure" in asked.trace("literature").inputs["why"]
    assert asked.literature[0].doc_id == BERT
    kept = LiteratureTier(search, mine, threshold=0.55, band=False).extend(unsure, top_confidence=0.60)
    assert kept.trace("literature").status == "skipped" and kept.literature == ()
