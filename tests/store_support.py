"""Helpers for the store tests (test_store, test_store_faults, test_store_integrity, test_link)."""

from __future__ import annotations

from citefinder.library.encoders.embedder import Embedder
from citefinder.library.store import Library
from citefinder.library.store.manifest import read_manifest


def assert_consistent(lib: Library, n: int) -> None:
    """Chroma's records, its vector index, BM25 and the manifest all agree on n papers."""
    assert lib.count() == n
    assert len(lib.ensure_bm25()) == n
    manifest = read_manifest(lib.path)
    assert (manifest["papers"], manifest["embedded"], manifest["dirty"]) == (n, lib.embedded_count(), False)
    assert len(lib._indexed_ids()) == lib.embedded_count()  # every stored paper has its vector indexed
    assert lib.problems() == []


class CountingEmbedder(Embedder):
    """The real embedder, counting how many texts it was asked to embed."""

    def __init__(self, *a, **kw) -> None:  # noqa: ANN002, ANN003
        super().__init__(*a, **kw)
        self.encoded = 0

    def encode(self, texts, **kw):  # noqa: ANN001, ANN003
        self.encoded += len(texts)
        return super().encode(texts, **kw)
