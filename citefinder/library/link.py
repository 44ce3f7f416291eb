"""A library linked to the user's own bibliography: a .bib or CSL-JSON file (e.g. a Better BibTeX
auto-export from Zotero) that the library follows.

The library remembers each linked file in ``links.json`` in its folder: the file's path and hash,
and for each entry (named by its citation key, else its doc_id) the stored doc_id, a fingerprint
of the record, and whether the link added it. :func:`sync_file` re-reads a file whose hash
changed: new entries are added, changed ones are rewritten in place (embedded again only when
their title or abstract changed), and entries gone from the file are removed when the link added
them and no other linked file lists them. Unchanged entries are not touched.

A sync that would read the file as empty, or lose more than half of its entries at once (a
half-written export, a file truncated by mistake), is a mass deletion: it is held — nothing is
applied, every paper is kept, and the report says so — until the user confirms it with
``library link --accept-removals FILE`` (:func:`link_file` with ``accept_removals``). When an
entry disappears but the same work stays in the file under another key, the stored paper takes
that key (a dead key is never left behind).

Only the public :class:`~citefinder.library.store.Library` API is used here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import InputError, LibraryError
from citefinder.library.readers import read_papers
from citefinder.library.sample_file import owned
from citefinder.types import ImportFailure, Paper

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.encoders.embedder import Embedder
    from citefinder.library.store import Library

log = logging.getLogger(__name__)

LINKS = "links.json"
LINKABLE = (".bib", ".json")


def unread_entries(failures: "tuple[ImportFailure, ...] | list[ImportFailure]", *, shown: int = 3,
                   rename: tuple[str, str] | None = None) -> str:
    """The entries of a file that could not be read, named (where and why): "1 entry could not be read
    (refs.bib:12: malformed BibTeX entry 'x' at line 12: ...)"; "" when none. ``rename``: (file name as read,
    as the user knows it)."""
    if not failures:
        return ""
    named = [f"{f.source}: {f.reason}" for f in failures[:shown]]
    if rename is not None:
        named = [n.replace(rename[0], rename[1]) for n in named]
    more = f"; and {len(failures) - shown} more" if len(failures) > shown else ""
    count = "1 entry" if len(failures) == 1 else f"{len(failures)} entries"
    return f"{count} could not be read ({'; '.join(named)}{more})"


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
    notes: tuple[str, ...] = ()  # what was read but not used as written (a key given to two entries), and why
    # a mass deletion not applied: the file reads as ``entries`` entries where it held ``previous``
    held: bool = False
    entries: int = 0
    previous: int = 0

    def summary(self) -> str:
        if self.held:
            name = Path(self.path).name
            return (f"{self.path}: now reads as {self.entries} entries where it held {self.previous}; "
                    f"not applied, so the library keeps all {self.previous} papers. If the entries were removed "
                    f"on purpose, run `citefinder library link --accept-removals {name}`; if the file is being "
                    "written (an export), wait for it to finish.")
        if not self.changed:
            return f"{self.path}: unchanged"
        text = (f"{self.path}: {self.added} added, {self.updated} updated, {self.removed} removed, "
                f"{self.unchanged} unchanged; {self.embedded} embedded in {self.elapsed_s:.1f} s")
        return text + (f"; {unread_entries(self.failures)}" if self.failures else "")


def linked_files(library: "Library") -> list[Path]:
    """The files this library follows, in the order they were linked."""
    return [Path(p) for p in _load(library.path)["files"]]


def linked_entries(library: "Library") -> int:
    """How many entries the linked files hold now (one per key; :mod:`citefinder.library.bibcount` counts)."""
    return sum(len(r.get("entries", {})) for r in _load(library.path)["files"].values())


def linked_paths(folder: Path | str) -> list[Path]:
    """The files the library in ``folder`` follows, read without opening it (none when it has no links yet)."""
    return [Path(p) for p in _load(Path(folder).expanduser())["files"]]


def link_file(library: "Library", path: Path | str, *, accept_removals: bool = False) -> SyncReport:
    """Follow ``path`` (a .bib or CSL-JSON file) from now on, and import it now; ``accept_removals``
    applies a sync that removes most (or all) of its entries, which a plain sync holds back."""
    path = Path(path).expanduser().resolve()
    if not path.name.lower().endswith(LINKABLE):
        raise InputError(f"{path.name}: only a BibTeX (.bib) or CSL-JSON (.json) file can be linked.")
    if not path.is_file():
        raise InputError(f"Cannot link {path}: no such file.")
    state = _load(library.path)
    state["files"].setdefault(str(path), {"sha256": None, "entries": {}})
    _save(library.path, state)
    return sync_file(library, path, force=True, accept_removals=accept_removals)


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


def sync_file(library: "Library", path: Path | str, *, force: bool = False,
              accept_removals: bool = False) -> SyncReport:
    """Bring the library up to date with the linked ``path``; a no-op when its hash is unchanged.

    A mass deletion (see the module docstring) is held unless ``accept_removals``."""
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

    current, failures, notes = _entries(path)
    previous: dict[str, dict[str, Any]] = record.get("entries", {})
    lost = mass_deletion(previous, current)
    if lost and not accept_removals:
        held = SyncReport(str(path), True, failures=tuple(failures), notes=tuple(notes), held=True,
                          entries=len(current), previous=len(previous), elapsed_s=time.perf_counter() - t0)
        log.warning("%s", held.summary())
        return held
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
    if gone and failures:  # an entry that could not be read (one unclosed brace) is no entry deleted: keep its paper
        notes.append(f"{len(failures)} entr{'y' if len(failures) == 1 else 'ies'} could not be read; the "
                     f"{len(set(gone))} paper{'s' if len(set(gone)) != 1 else ''} of entries missing from this "
                     "read are kept until the file reads cleanly")
        entries.update({ident: old for ident, old in previous.items() if ident not in entries
                        and old["doc_id"] in set(gone)})
        gone = []
    removed = library.remove(sorted(set(gone))) if gone else 0
    embedded = library.update_papers(_enrichment_kept(library, updates)) if updates else 0

    to_add: dict[str, Paper] = {}
    rekey: list[Paper] = []
    for ident, paper in fresh.items():
        match = library.match(paper)
        if match is None:
            to_add[ident] = paper
            continue
        entries[ident] = {"doc_id": match, "fp": _fingerprint(paper), "owned": False}
        stored = library.get([match])
        if stored and (new := owned(stored[0], paper)) != stored[0]:
            rekey.append(new)  # the file's key and entry text (a sample paper becomes the user's)
    rekey += _follow_keys(library, state, str(path), previous, current, entries, rekey)
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
        embedded=embedded, failures=tuple(failures), elapsed_s=time.perf_counter() - t0, notes=tuple(notes),
    )
    log.info("%s", synced.summary())
    return synced


def _enrichment_kept(library: "Library", updates: list[Paper]) -> list[Paper]:
    """The changed entries, each keeping what ``library enrich`` found for its stored paper (the abstract and
    ids marked in :attr:`Paper.provenance`) where the entry does not now give that field itself: a re-read .bib
    never loses an enrichment, and the user's own value replaces a found one."""
    stored = {p.doc_id: p for p in library.get([p.doc_id for p in updates])}
    return [kept_enrichment(stored[p.doc_id], p) if p.doc_id in stored else p for p in updates]


def kept_enrichment(stored: Paper, new: Paper) -> Paper:
    """``new`` (an entry read again) with the fields ``stored`` was enriched with that ``new`` lacks."""
    found = {field for field, _, _ in stored.provenance}
    if not found:
        return new
    abstract = new.abstract
    keep: set[str] = set()
    if "abstract" in found and not new.abstract.strip():
        abstract, keep = stored.abstract, {"abstract"}
    own = {scheme for scheme, _ in new.ids} | ({"doi"} if new.doi else set()) | ({"arxiv"} if new.arxiv_id else set())
    ids = list(new.ids) + [(scheme, value) for scheme, value in stored.ids if scheme in found and scheme not in own]
    keep |= {scheme for scheme, _ in ids if scheme in found and scheme not in own}
    provenance = tuple(new.provenance) + tuple(p for p in stored.provenance if p[0] in keep)
    return replace(new, abstract=abstract, ids=tuple(ids), provenance=provenance)


def mass_deletion(previous: dict[str, Any], current: dict[str, Paper]) -> int:
    """How many entries a sync would lose when that is a mass deletion (the file now reads as no entry,
    or more than half of the entries it held are gone, renamed keys not counted), else 0."""
    if not previous:
        return 0
    docs = {p.doc_id for p in current.values()}
    lost = sum(1 for ident, old in previous.items() if ident not in current and old.get("doc_id") not in docs)
    return lost if (not current or 2 * lost > len(previous)) else 0


def _entries(path: Path) -> tuple[dict[str, Paper], list[ImportFailure], list[str]]:
    """The file's papers by identity (citation key, else doc_id), what could not be read, and notes:
    a key given to several entries keeps the first of them, as BibTeX does."""
    papers: dict[str, Paper] = {}
    failures: list[ImportFailure] = []
    others: dict[str, list[Paper]] = {}
    for item in read_papers(path):
        if isinstance(item, ImportFailure):
            failures.append(item)
            continue
        ident = item.key or f"id:{item.doc_id}"
        if ident in papers:
            others.setdefault(ident, []).append(item)
            continue
        papers[ident] = item
    notes = []
    for ident, extra in others.items():
        titles = "; ".join(f'"{p.title[:60]}"' for p in extra)
        notes.append(f"{path.name}: key {ident!r} names {1 + len(extra)} entries; the first "
                     f'("{papers[ident].title[:60]}") is used, as BibTeX does, and the later one ({titles}) is not '
                     "imported: give it a key of its own to cite it")
    return papers, failures, notes


def _follow_keys(library: "Library", state: dict[str, Any], path: str, previous: dict[str, Any],
                 current: dict[str, Paper], entries: dict[str, Any], rekey: list[Paper]) -> list[Paper]:
    """Stored papers whose key left the file while the same work stays in it under another key:
    each takes that key (``attention`` deleted, ``vaswani2017attention`` kept -> the latter)."""
    gone = {ident for ident in previous if ident not in current}
    if not gone:
        return []
    keys = {k for p, r in state["files"].items() if p != path for k in r.get("entries", {})} | set(current)
    pending = {p.doc_id for p in rekey}
    want: dict[str, str] = {}
    for ident, entry in entries.items():
        paper = current.get(ident)
        if paper is not None and paper.key and entry["doc_id"] not in pending:
            want.setdefault(entry["doc_id"], paper.key)
    return [replace(p, key=want[p.doc_id]) for p in library.get(sorted(want))
            if p.key in gone and p.key not in keys]


def keys_by_doc(library: "Library", path: Path | str) -> dict[str, str]:
    """doc_id -> the citation key a linked file gives that paper now (the first when it gives several)."""
    record = _load(library.path)["files"].get(str(Path(path).expanduser().resolve()), {})
    out: dict[str, str] = {}
    for ident, entry in record.get("entries", {}).items():
        if not ident.startswith("id:"):
            out.setdefault(entry["doc_id"], ident)
    return out


def _fingerprint(paper: Paper) -> str:
    record = {k: v for k, v in paper.to_dict().items() if k != "position"}  # an entry moved in the file is unchanged
    return hashlib.sha1(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _load(folder: Path) -> dict[str, Any]:
    """The link state; none yet is no links, but a state that cannot be read stops the command (read as "no
    links" it would switch the mass-deletion guard off and forget which files the library follows)."""
    path = Path(folder) / LINKS
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        state = {}
    except (OSError, ValueError) as e:
        raise InputError(f"{path} cannot be read ({e}); the library's linked files are unknown. Move it aside "
                         f"and link your .bib again (citefinder library link FILE); nothing was changed.") from e
    if not isinstance(state, dict) or not isinstance(state.setdefault("files", {}), dict):
        raise InputError(f"{path} is not a link state (a JSON object with \"files\"); move it aside and link your "
                         ".bib again; nothing was changed.")
    return state


def _save(folder: Path, state: dict[str, Any]) -> None:
    from citefinder.text.safewrite import atomic_write

    atomic_write(Path(folder) / LINKS, json.dumps(state, indent=1, ensure_ascii=False).encode("utf-8"))


def library_beside(bib: Path | str) -> Path:
    """The library folder kept next to a bibliography file: ``refs.bib`` -> ``.refs.citefinder/``."""
    bib = Path(bib).expanduser().resolve()
    return bib.parent / f".{bib.stem}.citefinder"
