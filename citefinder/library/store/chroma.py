"""The Chroma side of a library: the client (embedded folder or ``chroma run`` server), the collection
of a folder, and the checks made before opening it (embedder, store files, a read-only folder's copy)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from citefinder.config import Settings
from citefinder.errors import (
    CitefinderError,
    EmbedderMismatchError,
    LibraryDamagedError,
    LibraryError,
    StoreUnavailableError,
)
from citefinder.library.encoders.embedder import CitefinderEmbeddingFunction, Embedder
from citefinder.library.records import from_record
from citefinder.library.store.layout import CHROMA_DIR
from citefinder.library.store.pending import FILE as PENDING_FILE
from citefinder.types import Paper

log = logging.getLogger(__name__)

# Above ``exact_dense_max`` papers the dense agent uses Chroma's HNSW index; a search width of 256
# (Chroma's default is 100) keeps its recall of a top 100 close to exact search.
HNSW_EF_SEARCH = 256


def open_collection(settings: Settings, name: str, embedder: Embedder, folder: Path) -> tuple[Any, Any]:
    """The client and the collection ``name`` (created if new) of the store in ``folder``, its embedder checked."""
    try:
        client = make_client(settings, folder, fresh=True)
        collection = client.get_or_create_collection(
            name,
            embedding_function=CitefinderEmbeddingFunction(embedder),
            configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
            metadata={"embedder": embedder.name, "max_seq_length": embedder.max_seq_length},
        )
    except CitefinderError:
        raise
    except Exception as e:  # noqa: BLE001 - chroma raises many kinds; one clear message
        raise LibraryError(f"Cannot open the Chroma collection {name!r} ({where(settings)}): {e}") from e
    meta = collection.metadata or {}
    if meta.get("embedder") not in (None, embedder.name) or meta.get("max_seq_length") not in (
        None,
        embedder.max_seq_length,
    ):
        raise EmbedderMismatchError(
            f"The collection {name!r} holds vectors made by embedder {meta.get('embedder')!r} "
            f"(max_seq_length {meta.get('max_seq_length')}), but {embedder.name!r} "
            f"(max_seq_length {embedder.max_seq_length}) is configured. Set CITEFINDER_EMBEDDER / "
            "CITEFINDER_EMBED_MAX_SEQ_LENGTH to match, or use a new library folder."
        )
    return client, collection


def papers_of(res: Any) -> list[Paper]:
    """The papers of a Chroma ``get`` result (ids, metadatas, documents)."""
    return [from_record(i, m, d)
            for i, m, d in zip(res["ids"], res["metadatas"] or [], res["documents"] or [], strict=False)]


def make_client(settings: Settings, path: Path, *, fresh: bool = False) -> Any:
    """A Chroma client; ``fresh`` drops this process's cached embedded store for ``path`` first, so
    papers and vectors another process wrote since are seen (the embedded client caches them)."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if settings.chroma_host:
            host, _, port = settings.chroma_host.rpartition(":")
            return chromadb.HttpClient(host=host, port=int(port), settings=chroma_settings)
        if fresh:
            # Not stopped: objects other threads still hold keep working on the old one until dropped.
            SharedSystemClient._identifier_to_system.pop(str(path / CHROMA_DIR), None)
        return chromadb.PersistentClient(path=str(path / CHROMA_DIR), settings=chroma_settings)
    except Exception as e:  # noqa: BLE001
        hint = " Is `chroma run` started there?" if settings.chroma_host else ""
        raise LibraryError(f"Cannot connect to the Chroma store ({where(settings)}): {e}.{hint}") from e


def where(settings: Settings) -> str:
    if settings.chroma_host:
        return f"server {settings.chroma_host}"
    return f"embedded, {Path(settings.library) / CHROMA_DIR}"


def check_embedder(path: Path, manifest: dict[str, Any], embedder: Embedder) -> None:
    saved = manifest.get("embedder")
    if not saved:
        return
    if saved.get("name") != embedder.name or saved.get("max_seq_length") != embedder.max_seq_length:
        raise EmbedderMismatchError(
            f"The library at {path} was built with embedder {saved.get('name')!r} "
            f"(max_seq_length {saved.get('max_seq_length')}), but {embedder.name!r} "
            f"(max_seq_length {embedder.max_seq_length}) is configured. Vectors from different embedders "
            "cannot be mixed: set CITEFINDER_EMBEDDER / CITEFINDER_EMBED_MAX_SEQ_LENGTH to match, or use a new "
            "library folder."
        )


def writable(path: Path) -> bool:
    """Can files be created in ``path``? (``os.access`` says yes to root on a read-only mount.)"""
    try:
        fd, name = tempfile.mkstemp(prefix=".write-test-", dir=path)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def read_only_copy(path: Path) -> Path:
    """A temporary copy of a read-only folder's store: Chroma's embedded client must write to open one."""
    tmp = Path(tempfile.mkdtemp(prefix="citefinder-readonly-"))
    log.warning("the library folder %s is read-only; searching a temporary copy of its store in %s", path, tmp)
    try:
        if (path / CHROMA_DIR).is_dir():
            shutil.copytree(path / CHROMA_DIR, tmp / CHROMA_DIR)
        if (path / PENDING_FILE).is_file():
            shutil.copy2(path / PENDING_FILE, tmp / PENDING_FILE)
        for f in tmp.rglob("*"):  # the copy keeps the read-only modes; SQLite must write to open it
            f.chmod(f.stat().st_mode | 0o200)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreUnavailableError(f"The library folder {path} is read-only and its store could not be copied "
                                    f"to a temporary folder to search it: {e}") from e
    return tmp


def check_store_files(settings: Settings, path: Path, manifest: dict[str, Any]) -> None:
    """Before opening: a store file the manifest says holds papers must exist and not be empty."""
    if manifest.get("dirty"):
        return
    papers, embedded = int(manifest.get("papers", 0) or 0), int(manifest.get("embedded", 0) or 0)
    files = []
    if not settings.chroma_host and embedded > 0:
        files.append((path / CHROMA_DIR / "chroma.sqlite3", embedded, "with vectors"))
    if papers - embedded > 0:
        files.append((path / PENDING_FILE, papers - embedded, "awaiting vectors"))
    if not settings.chroma_host:
        check_chroma_files(path)
    for file, n, what in files:
        if not file.is_file() or file.stat().st_size == 0:
            state = "missing" if not file.exists() else "empty"
            raise LibraryDamagedError(
                f"The library at {path} should hold {n} papers {what}, but {file} is {state}. Restore the folder "
                "from a backup, or run `citefinder library repair` to accept the loss and rebuild the indexes."
            )


def collection_name(settings: Settings, path: Path, manifest: dict[str, Any]) -> str:
    """The Chroma collection of this folder: the explicit setting, else the one the manifest names,
    else (on a server, for a new folder) one derived from the folder so folders never share one."""
    if "collection" in settings.model_fields_set:
        return settings.collection
    if manifest.get("collection"):
        return str(manifest["collection"])
    if not settings.chroma_host or manifest:  # embedded, or a library made before folders had their own
        return settings.collection
    digest = hashlib.sha1(str(path.expanduser().resolve()).encode()).hexdigest()[:12]
    return f"{settings.collection}-{digest}"



def check_chroma_files(path: Path) -> None:
    """Before Chroma opens them: a damaged chroma.sqlite3, or a vector index folder that is gone, is named
    (:mod:`~citefinder.library.store.chroma_files`) with how to repair it."""
    from citefinder.library.store.chroma_files import STORE_FILE, damaged_store, lost_vector_folders

    store = path / CHROMA_DIR / STORE_FILE
    if (why := damaged_store(path)) is not None:
        raise LibraryDamagedError(
            f"The library's Chroma store file {store} is damaged ({why}): it was cut short or overwritten. "
            "Restore the folder from a backup, or run `citefinder library repair`: it keeps the papers the file "
            "still holds, sets the damaged store aside and embeds them again.")
    if lost := lost_vector_folders(path):
        raise LibraryDamagedError(
            f"Chroma's vector index of the library at {path} is missing: its segment folder "
            f"{CHROMA_DIR}/{lost[0]} beside {STORE_FILE} was deleted or emptied, so dense search would miss the "
            "papers whose vectors it held. Run `citefinder library repair`: it rebuilds the index from the "
            "stored papers (their vectors embedded again).")
