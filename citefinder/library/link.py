"""A library linked to the user's own bibliography: a .bib or CSL-JSON file (e.g. a Better BibTeX
auto-export from Zotero) that the library follows.

The library remembers each linked file in ``links.json`` in its folder: the file's path and hash,
and for each entry (named by its citation key, else its doc_id) the stored doc_id, a fingerprint
of the record, and whether the link added it. :func:`sync_file` re-reads a file whose hash
changed: new entries are added, changed ones are rewritten in place (embedded again only when
their title or abstract changed), and entries gone from the file are removed when the link added
them and no other linked file lists them. Unchanged entries are not touched.

Only the public :class:`~citefinder.library.store.Library` API is used here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import InputError, LibraryError
from citefinder.library.bibentry import adopted
from citefinder.library.readers import read_papers
from citefinder.types import ImportFailure, Paper

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.embedder import Embedder
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

LINKS = "links.json"
LINKABLE = (".bib", ".json")


@dataclass(frozen=True)
class SyncReport:
    """What one sync of a linked file did. ``changed`` is False when the file was not read (same hash)."""

    path: str
    changed: bool
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0  # papers whose vectors were computed: new ones and those whose text changed
    failures: tuple[ImportFailure, ...] = ()
    elapsed_s: float = 0.0

    def summary(self) -> str:
        if not self.changed:
            return f"{self.path}: unchanged"
        text = (f"{self.path}: {self.added} added, {self.updated} updated, {self.removed} removed, "
                f"{self.unchanged} unchanged; {self.embedded} embedded in {self.elapsed_s:.1f} s")
        return text + (f"; {len(self.failures)} entries could not be read" if self.failures else "")


def linked_files(library: "Library") -> list[Path]:
    """The files this library follows, in the order they were linked."""
    return [Path(p) for p in _load(library.path)["files"]]


def link_file(library: "Library", path: Path | str) -> SyncReport:
    """Follow ``path`` (a .bib or CSL-JSON file) from now on, and import it now."""
    path = Path(path).expanduser().resolve()
    if not path.name.lower().endswith(LINKABLE):
        raise InputError(f"{path.name}: only a BibTeX (.bib) or CSL-JSON (.json) file can be linked.")
    if not path.is_file():
        raise InputError(f"Cannot link {path}: no such file.")
    state = _load(library.path)
    state["files"].setdefault(str(path), {"sha256": None, "entries": {}})
    _save(library.path, state)
    return sync_file(library, path, force=True)


def unlink_file(library: "Library", path: Path | str) -> bool:
    """Stop following ``path``; its papers stay in the library. False when it was not linked."""
    state = _load(library.path)
    gone = state["files"].pop(str(Path(path).expanduser().resolve()), None)
    _save(library.path, state)
    return gone is not None


def sync_all(library: "Library") -> list[SyncReport]:
    """Sync every linked file that changed since its last sync (a missing file is reported, not unlinked)."""
    reports = []
    for path in linked_files(library):
        if not path.is_file():
            reports.append(SyncReport(str(path), False, failures=(ImportFailure(str(path), "linked file not found"),)))
            log.warning("linked file %s is missing; its papers are kept", path)
            continue
        reports.append(sync_file(library, path))
    return reports


def open_library(settings: "Settings", *, embedder: "Embedder | None" = None) -> "Library":
    """:meth:`Library.open`, then bring every linked file up to date (:func:`sync_all`)."""
    from citefinder.library.store import Library

    library = Library.open(settings, embedder=embedder)
    for report in sync_all(library):
        if report.changed or report.failures:
            log.info("%s", report.summary())
    return library


def sync_file(library: "Library", path: Path | str, *, force: bool = False) -> SyncReport:
    """Bring the library up to date with the linked ``path``; a no-op when its hash is unchanged."""
    t0 = time.perf_counter()
    path = Path(path).expanduser().resolve()
    state = _load(library.path)
    if str(path) not in state["files"]:
        raise LibraryError(f"{path} is not linked to the library at {library.path}; link it first.")
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise InputError(f"Cannot read the linked file {path}: {e}") from e
    record = state["files"][str(path)]
    if not force and record.get("sha256") == digest:
        return SyncReport(str(path), False)

    current, failures = _entries(path)
    previous: dict[str, dict[str, Any]] = record.get("entries", {})
    others = {e["doc_id"] for p, r in state["files"].items() if p != str(path) for e in r.get("entries", {}).values()}
    entries: dict[str, dict[str, Any]] = {}
    updates: list[Paper] = []
    fresh: dict[str, Paper] = {}
    unchanged = 0
    for ident, paper in current.items():
        fp = _fingerprint(paper)
        old = previous.get(ident)
        if old and old["fp"] == fp:
            entries[ident] = old
            unchanged += 1
        elif old and old["doc_id"] == paper.doc_id and old.get("owned"):
            entries[ident] = {**old, "fp": fp}
            updates.append(paper)
        else:
            fresh[ident] = paper
    # an entry whose key was renamed: same doc_id under a new key is an update, not remove + add
    renamed = {old["doc_id"]: old for ident, old in previous.items() if ident not in current and old.get("owned")}
    for ident, paper in list(fresh.items()):
        if paper.doc_id in renamed:
            entries[ident] = {**renamed.pop(paper.doc_id), "fp": _fingerprint(paper)}
            updates.append(paper)
            del fresh[ident]
    kept = {e["doc_id"] for e in entries.values()}
    gone = [
        old["doc_id"] for ident, old in previous.items()
        if ident not in entries and old.get("owned") and old["doc_id"] not in kept and old["doc_id"] not in others
    ]
    removed = library.remove(sorted(set(gone))) if gone else 0
    embedded = library.update_papers(updates) if updates else 0

    to_add: dict[str, Paper] = {}
    rekey: list[Paper] = []
    for ident, paper in fresh.items():
        match = library.match(paper)
        if match is None:
            to_add[ident] = paper
            continue
        entries[ident] = {"doc_id": match, "fp": _fingerprint(paper), "owned": False}
        stored = library.get([match])
        if stored and (new := adopted(stored[0], paper)) != stored[0]:
            rekey.append(new)  # the file's key and entry text (a sample paper becomes the user's)
    if rekey:
        embedded += library.update_papers(rekey)  # a new key only: nothing is embedded
    added = 0
    if to_add:
        report = library.add_papers(list(to_add.values()))
        added, embedded = report.added, embedded + report.added
        failures += list(report.failures)
        done = set(report.added_ids)
        for ident, paper in to_add.items():
            if paper.doc_id in done:
                entries[ident] = {"doc_id": paper.doc_id, "fp": _fingerprint(paper), "owned": True}
            elif match := library.match(paper):  # the same work twice in the file, under two keys
                entries[ident] = {"doc_id": match, "fp": _fingerprint(paper), "owned": False}

    state = _load(library.path)  # re-read: the library's writes above do not touch it, but be safe
    state["files"][str(path)] = {"sha256": digest, "entries": entries, "synced_at": time.time()}
    _save(library.path, state)
    synced = SyncReport(
        str(path), True, added=added, updated=len(updates) + len(rekey), removed=removed, unchanged=unchanged,
        embedded=embedded, failures=tuple(failures), elapsed_s=time.perf_counter() - t0,
    )
    log.info("%s", synced.summary())
    return synced


def _entries(path: Path) -> tuple[dict[str, Paper], list[ImportFailure]]:
    """The file's papers by identity (citation key, else doc_id); a key used twice keeps its first entry."""
    papers: dict[str, Paper] = {}
    failures: list[ImportFailure] = []
    for item in read_papers(path):
        if isinstance(item, ImportFailure):
            failures.append(item)
            continue
        ident = item.key or f"id:{item.doc_id}"
        if ident in papers:
            failures.append(ImportFailure(path.name,
                                          f"key {ident!r} is used by more than one entry; the first is kept"))
            continue
        papers[ident] = item
    return papers, failures


def _fingerprint(paper: Paper) -> str:
    record = {k: v for k, v in paper.to_dict().items() if k != "position"}  # an entry moved in the file is unchanged
    return hashlib.sha1(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _load(folder: Path) -> dict[str, Any]:
    try:
        state = json.loads((Path(folder) / LINKS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    state.setdefault("files", {})
    return state


def _save(folder: Path, state: dict[str, Any]) -> None:
    tmp = Path(folder) / (LINKS + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(Path(folder) / LINKS)


def library_beside(bib: Path | str) -> Path:
    """The library folder kept next to a bibliography file: ``refs.bib`` -> ``.refs.citefinder/``."""
    bib = Path(bib).expanduser().resolve()
    return bib.parent / f".{bib.stem}.citefinder"
