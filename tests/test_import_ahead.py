"""Encoding one batch ahead (library/store/ahead.py, setting embed_ahead): the import and `library embed` store the
same papers and vectors as one after the other, dedupe across the batch in flight, and a stop keeps every
written batch (a re-run completes the library)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from citefinder.config import Settings
from citefinder.errors import ImportInterrupted
from citefinder.library.encoders.embedder import Embedder
from citefinder.library.store import Library, writes
from citefinder.types import Paper

pytestmark = pytest.mark.slow
BATCH = 4


class RecordingEmbedder(Embedder):
    """The real MiniLM; records which thread each bulk encode ran on, and can stop on its n-th call."""

    def __init__(self) -> None:
        super().__init__("minilm")
        self.threads: list[str] = []
        self.stop_at: int | None = None

    def encode(self, texts, **kw):  # type: ignore[override]
        self.threads.append(threading.current_thread().name)
        if self.stop_at is not None and len(self.threads) == self.stop_at:
            raise KeyboardInterrupt
        return super().encode(texts, **kw)


@pytest.fixture()
def embedder() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture(autouse=True)
def small_batches(monkeypatch) -> None:
    monkeypatch.setattr(writes, "WRITE_BATCH", BATCH)


def papers(n: int = 18) -> list[Paper]:
    out = [Paper(f"d{i}", f"Paper {i} on topic {i % 5}", abstract=f"We study problem {i} with method {i * 7}.",
                 doi=f"10.1/{i}") for i in range(n)]
    # the duplicate of a paper of the batch in flight (papers 4-7 are embedded while 8-11 are read)
    out.insert(9, Paper("dup5", "Paper 5 on topic 0", abstract="Another record of it.", doi="10.1/5"))
    return out


def vectors(lib: Library) -> dict[str, np.ndarray]:
    return {i: np.asarray(v) for ids, block in lib.iter_vectors() for i, v in zip(ids, block, strict=True)}


def test_ahead_stores_what_one_after_the_other_stores(tmp_path: Path, embedder: RecordingEmbedder) -> None:
    ahead = Library.open(Settings(library=str(tmp_path / "a"), embed_ahead=True), embedder=embedder)
    report = ahead.add_papers(papers())
    assert report.added == 18 and report.duplicates == 1
    assert all(t.startswith("citefinder-encode") for t in embedder.threads)  # the worker embedded every batch
    plain_embedder = RecordingEmbedder()
    plain = Library.open(Settings(library=str(tmp_path / "b"), embed_ahead=False), embedder=plain_embedder)
    assert plain.add_papers(papers()).added == 18
    assert not any(t.startswith("citefinder-encode") for t in plain_embedder.threads)
    va, vb = vectors(ahead), vectors(plain)
    assert sorted(va) == sorted(vb) == sorted(f"d{i}" for i in range(18))
    for i in va:
        assert float(va[i] @ vb[i]) > 0.9999
    assert len(embedder.threads) == 5  # 18 papers in batches of 4


def test_a_stop_keeps_the_written_batches_and_a_rerun_completes(tmp_path: Path, embedder: RecordingEmbedder) -> None:
    settings = Settings(library=str(tmp_path / "lib"), embed_ahead=True)
    lib = Library.open(settings, embedder=embedder)
    embedder.stop_at = 3  # the third batch's encode (in the worker) is interrupted
    with pytest.raises(ImportInterrupted) as stopped:
        lib.add_papers(papers())
    assert stopped.value.report.added == 2 * BATCH
    assert lib.count() == 2 * BATCH == len(vectors(lib))
    embedder.stop_at = None
    again = lib.add_papers(papers())
    assert again.added == 18 - 2 * BATCH and lib.count() == 18 == len(vectors(lib))


def test_library_embed_runs_ahead_and_resumes(tmp_path: Path, embedder: RecordingEmbedder) -> None:
    lib = Library.open(Settings(library=str(tmp_path / "lib"), embed_ahead=True), embedder=embedder)
    assert lib.add_papers(papers(), defer_embedding=True).added == 18
    assert embedder.threads == [] and lib.pending_count() == 18
    embedder.stop_at = 3
    with pytest.raises(ImportInterrupted):
        lib.embed_pending()
    assert lib.embedded_count() == 2 * BATCH and lib.pending_count() == 18 - 2 * BATCH
    embedder.stop_at = None
    seen: list[tuple[int, int | None]] = []
    assert lib.embed_pending(progress=lambda done, total: seen.append((done, total))) == 18 - 2 * BATCH
    assert lib.pending_count() == 0 and lib.embedded_count() == 18 == len(vectors(lib))
    assert seen[-1] == (10, 10) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert all(t.startswith("citefinder-encode") for t in embedder.threads)


def test_ahead_import_and_embed_over_a_chroma_server(tmp_path: Path, chroma_server: str,
                                                     embedder: RecordingEmbedder) -> None:
    settings = Settings(library=str(tmp_path / "lib"), chroma_host=chroma_server, embed_ahead=True)
    lib = Library.open(settings, embedder=embedder)
    first, rest = papers()[:9], papers()[9:]
    assert lib.add_papers(first).added == 9
    assert lib.add_papers(rest, defer_embedding=True).added == 9  # dup5 is skipped: d5 is stored
    assert lib.embed_pending() == 9
    assert lib.count() == 18 == lib.embedded_count() == len(vectors(lib))
    reopened = Library.open(settings)
    assert reopened.count() == 18 and reopened.pending_count() == 0
