"""The library store on real Chroma (embedded and `chroma run` server), real bm25s and real MiniLM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from store_support import CountingEmbedder

from citefinder.config import Settings
from citefinder.errors import EmbedderMismatchError
from citefinder.index.vectors import dense_search
from citefinder.library.store import Library

pytestmark = pytest.mark.slow

N_MODE = 40


@pytest.fixture(scope="module")
def shared_embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.server)])
def mode_settings(request, tmp_path, chroma_server_lazy) -> Settings:
    if request.param == "server":
        # each test gets its own collection on the shared server
        return Settings(library=tmp_path / "lib", chroma_host=chroma_server_lazy(),
                        collection=f"t{abs(hash(tmp_path)) % 10**8}")
    return Settings(library=tmp_path / "lib")


@pytest.fixture(scope="session")
def chroma_server_lazy(request):
    """Start the server only when a server-mode test asks for it."""
    return lambda: request.getfixturevalue("chroma_server")


@pytest.fixture
def records(sampled_records) -> list[dict]:
    return sampled_records[0][:N_MODE]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return path


def test_import_search_reopen_remove(mode_settings, records, tmp_path, shared_embedder) -> None:
    src = write_jsonl(tmp_path / "papers.jsonl", records)
    lib = Library.open(mode_settings, embedder=shared_embedder)
    assert lib.count() == 0
    assert lib.bm25_search("anything", 5) == []

    report = lib.import_files([src])
    assert (report.added, report.duplicates, report.failures) == (N_MODE, 0, ())
    assert lib.count() == N_MODE

    target = records[7]
    assert lib.bm25_search(target["title"], 5)[0].doc_id == target["doc_id"]
    dense = dense_search(lib, target["title"], 5)
    assert dense[0].doc_id == target["doc_id"]
    assert dense[0].rank == 1 and 0.5 < dense[0].score <= 1.0001

    got = lib.get([records[3]["doc_id"], "no-such-id", records[1]["doc_id"]])
    assert [p.doc_id for p in got] == [records[3]["doc_id"], records[1]["doc_id"]]
    assert got[0].title == records[3]["title"] and got[0].abstract == records[3]["abstract"]
    assert list(got[0].authors) == records[3]["authors"]

    # a re-import of the same file adds nothing and embeds nothing
    before = shared_embedder.encoded
    again = lib.import_files([src])
    assert (again.added, again.duplicates) == (0, N_MODE)
    assert shared_embedder.encoded == before

    # reopening loads the saved BM25 index (same answers) without re-embedding
    reopened = Library.open(mode_settings, embedder=shared_embedder)
    assert reopened.count() == N_MODE
    assert reopened.bm25_search(target["title"], 1)[0].doc_id == target["doc_id"]
    assert shared_embedder.encoded == before

    assert reopened.remove([target["doc_id"]]) == 1
    assert reopened.count() == N_MODE - 1
    assert target["doc_id"] not in [h.doc_id for h in reopened.bm25_search(target["title"], 10)]
    assert target["doc_id"] not in [h.doc_id for h in dense_search(reopened, target["title"], 10)]


def test_incremental_import_embeds_only_new_papers(tmp_path, records, shared_embedder) -> None:
    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=shared_embedder)
    lib.import_files([write_jsonl(tmp_path / "a.jsonl", records[:30])])
    before = shared_embedder.encoded
    report = lib.import_files([write_jsonl(tmp_path / "b.jsonl", records[20:40])])
    assert (report.added, report.duplicates) == (10, 10)
    assert shared_embedder.encoded - before == 10
    assert lib.count() == 40


def test_dedupe_by_doi_arxiv_and_title(tmp_path, shared_embedder) -> None:
    from citefinder.types import Paper

    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=shared_embedder)
    base = [
        Paper("doi:10.1000/abc", "A Study of Things", doi="10.1000/abc"),
        Paper("arxiv:1706.03762", "Attention Is All You Need", arxiv_id="1706.03762"),
        Paper("t:1", "Deep Residual Learning for Image Recognition"),
    ]
    assert lib.add_papers(base).added == 3
    dupes = [
        Paper("t:x", "Completely different title", doi="https://doi.org/10.1000/ABC"),  # same DOI
        Paper("t:y", "Attention is all you need!", arxiv_id=None),  # same normalised title
        Paper("t:z", "Another", arxiv_id="1706.03762"),  # same arXiv id
        Paper("t:new", "A genuinely new paper"),
    ]
    report = lib.add_papers(dupes)
    assert (report.added, report.duplicates) == (1, 3)
    assert report.added_ids == ("t:new",)

    # one title, different works: other first author, or years far apart; a year's drift is one work
    same_title = [
        Paper("t:dl1", "Deep learning", authors=("Yann LeCun", "Yoshua Bengio"), year=2015),
        Paper("t:dl2", "Deep Learning", authors=("Ian Goodfellow", "Yoshua Bengio"), year=2016),
        Paper("t:dl3", "Deep learning.", authors=("Y. LeCun",), year=2016),  # same work, a year later
        Paper("t:dl4", "Deep Learning", year=1999),  # years far apart
    ]
    report = lib.add_papers(same_title)
    assert report.added_ids == ("t:dl1", "t:dl2", "t:dl4")
    assert report.duplicates == 1


def test_embedder_mismatch_is_refused(tmp_path, shared_embedder, records) -> None:
    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=shared_embedder)
    lib.import_files([write_jsonl(tmp_path / "a.jsonl", records[:3])])
    with pytest.raises(EmbedderMismatchError, match="max_seq_length 256"):
        Library.open(Settings(library=tmp_path / "lib", embed_max_seq_length=128))


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from citefinder.config import Settings, offline_environment
    offline_environment()
    import citefinder.library.store as store
    import citefinder.library.store.writes as writes
    writes.WRITE_BATCH = 16
    lib = store.Library.open(Settings(library=sys.argv[1]))
    def progress(done, total):
        if done >= 40:  # two full batches written, the third half read: die without cleanup
            os.kill(os.getpid(), signal.SIGKILL)
    lib.import_files([sys.argv[2]], progress=progress)
    """
)


def test_killed_import_leaves_a_usable_library(tmp_path, records) -> None:
    src = write_jsonl(tmp_path / "papers.jsonl", records)
    libdir = tmp_path / "lib"
    proc = subprocess.run([sys.executable, "-c", KILLER, str(libdir), str(src)], capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]

    lib = Library.open(Settings(library=libdir))
    # every fully written batch, nothing half-written: the first batch; the second was being embedded ahead
    # (setting embed_ahead) while the third was read, and is not written until its vectors are ready
    assert lib.count() == 16 == lib.embedded_count()
    stored = {p.doc_id: p for p in lib.iter_papers()}
    for r in records[:16]:
        assert stored[r["doc_id"]].title == r["title"]
    # BM25 was rebuilt from what is stored and agrees with it: stored papers are found, lost ones are not
    assert lib.stats()["bm25_documents"] == 16
    assert lib.bm25_search(records[5]["title"], 1)[0].doc_id == records[5]["doc_id"]
    lost = records[20]
    assert lost["doc_id"] not in {h.doc_id for h in lib.bm25_search(lost["title"], N_MODE)}

    # re-running the import completes it without duplicates
    report = lib.import_files([src])
    assert (report.added, report.duplicates) == (N_MODE - 16, 16)
    assert lib.count() == N_MODE


def test_deferred_embedding_is_searchable_at_once_and_resumable(
    tmp_path, records, shared_embedder, monkeypatch
) -> None:
    import citefinder.library.store.writes as writes
    from citefinder.retrieve.agents.dense import DenseAgent
    from citefinder.retrieve.base import run_agent
    from citefinder.types import Query

    monkeypatch.setattr(writes, "WRITE_BATCH", 8)
    lib = Library.open(Settings(library=tmp_path / "lib"), embedder=shared_embedder)
    before = shared_embedder.encoded
    report = lib.import_files([write_jsonl(tmp_path / "a.jsonl", records[:20])], defer_embedding=True)
    assert report.added == 20 and shared_embedder.encoded == before  # no model ran
    assert (lib.count(), lib.embedded_count(), lib.pending_count()) == (20, 0, 20)
    target = records[11]
    assert lib.bm25_search(target["title"], 3)[0].doc_id == target["doc_id"]
    assert dense_search(lib, target["title"], 3) == []
    assert lib.get([target["doc_id"]])[0].abstract == target["abstract"]
    assert {p.doc_id for p in lib.browse(0, 100)} == {r["doc_id"] for r in records[:20]}
    _, trace = run_agent(DenseAgent(lib.settings, lib), Query(target["title"]))
    assert trace.status == "skipped" and "covers 0 of 20 papers" in trace.message
    assert trace.details["coverage"] == {"embedded": 0, "total": 20}

    # interrupted after the first batch: what was embedded stays, the rest stays queued
    calls = []
    assert lib.embed_pending(should_stop=lambda: len(calls) >= 1, progress=lambda d, t: calls.append(d)) == 8
    reopened = Library.open(Settings(library=tmp_path / "lib"), embedder=shared_embedder)
    assert (reopened.count(), reopened.embedded_count(), reopened.pending_count()) == (20, 8, 12)
    # a paper already in Chroma but still queued (killed between the two writes) is not added twice
    reopened._pending.add(reopened.get([records[0]["doc_id"]]))
    assert reopened.embed_pending() == 13
    assert (reopened.count(), reopened.embedded_count(), reopened.pending_count()) == (20, 20, 0)
    assert dense_search(reopened, target["title"], 1)[0].doc_id == target["doc_id"]
    _, trace = run_agent(DenseAgent(reopened.settings, reopened), Query(target["title"]))
    assert trace.status == "ok" and "covers" not in trace.message
    # removing works for queued and embedded papers alike
    reopened.import_files([write_jsonl(tmp_path / "b.jsonl", records[20:22])], defer_embedding=True)
    assert reopened.remove([records[20]["doc_id"], records[1]["doc_id"]]) == 2
    assert (reopened.count(), reopened.pending_count()) == (20, 1)


def test_query_encoding_runs_on_one_thread_and_matches_bulk(shared_embedder, monkeypatch) -> None:
    import torch

    from citefinder.library.encoders.bert import BertEncoder

    seen: list[int] = []
    real_encode = BertEncoder.encode

    def spy(self, *args, **kwargs):  # records the thread count the real encode runs with
        seen.append(torch.get_num_threads())
        return real_encode(self, *args, **kwargs)

    monkeypatch.setattr(BertEncoder, "encode", spy)
    original = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        texts = ["dense passage retrieval for open-domain question answering"] * 3 + ["x"] * 7
        one = shared_embedder.encode(texts[:1])  # a query: one thread
        bulk = shared_embedder.encode(texts)  # more than SINGLE_THREAD_MAX_TEXTS: every thread
        assert seen == [1, 2]
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(original)
    assert np.allclose(one[0], bulk[0], atol=1e-5)
