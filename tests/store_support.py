"""Helpers for the store fault tests (test_store_faults, test_store_integrity)."""

from __future__ import annotations

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
