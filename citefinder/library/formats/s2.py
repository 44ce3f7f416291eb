"""Semantic Scholar dataset records (the Datasets API's ``papers`` and ``abstracts`` datasets, JSON Lines in
gzip parts), and records already joined (or from the Graph API) that carry their ``abstract``::

    papers:    {"corpusid": 215416146, "externalids": {"DOI": ..., "ArXiv": ..., "MAG": ..., "DBLP": ...,
                "PubMed": ..., "ACL": ..., "CorpusId": ...}, "title": ..., "authors": [{"authorId": ..,
                "name": ..}], "year": 2020, "venue": ..., "journal": {"name": .., "pages": .., "volume": ..},
                "publicationtypes": [..],
                "s2fieldsofstudy": [{"category": "Computer Science", "source": "s2-fos-model"}], ...}
    abstracts: {"corpusid": 215416146, "abstract": "...", "openaccessinfo": {...}}

The two datasets are joined by ``corpusid`` in bounded memory: the abstracts go into a SQLite table on disk
(:class:`AbstractsTable`), which each papers record then looks up. The Graph API's camelCase keys
(``corpusId``, ``externalIds``, ``fieldsOfStudy``) are read too. ``citationcount`` (``citationCount``) goes to
``Paper.cited_by``.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import build_paper, citation_count
from citefinder.library.formats.lines import DumpFormat, positioned_records, read_dump
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

# externalids kept in Paper.ids for matching (scheme as CiteFinder names it)
_OTHER_IDS = {"MAG": "mag", "PubMed": "pmid", "DBLP": "dblp", "ACL": "acl", "PubMedCentral": "pmcid"}
_ENTRY_TYPES = {"JournalArticle": "article", "Conference": "inproceedings", "Book": "book",
                "BookSection": "incollection", "Dataset": "misc"}
LOAD_BATCH = 5_000


def _text(value: Any) -> str | None:
    """A journal's pages or volume as text (S2 writes " 1735-1780" or a number), None for anything else."""
    return " ".join(str(value).split()) or None if isinstance(value, (str, int)) and not isinstance(value, bool) \
        else None


def _get(record: dict[str, Any], *names: str) -> Any:
    return next((record[n] for n in names if record.get(n) is not None), None)


def corpus_id(record: dict[str, Any]) -> str | None:
    """The record's corpus id as text (``corpusid``, ``corpusId`` or ``externalids.CorpusId``)."""
    value = _get(record, "corpusid", "corpusId")
    if value is None and isinstance(ext := _get(record, "externalids", "externalIds"), dict):
        value = ext.get("CorpusId")
    return str(value) if value not in (None, "") and not isinstance(value, bool) else None


def looks_like(record: dict[str, Any]) -> bool:
    """A Semantic Scholar papers record: a corpus id or external ids beside a title."""
    return "title" in record and any(k in record for k in ("corpusid", "corpusId", "externalids", "externalIds"))


def looks_like_abstracts(record: dict[str, Any]) -> bool:
    """A record of the ``abstracts`` dataset: a corpus id and an abstract, no title."""
    return "title" not in record and "abstract" in record and corpus_id(record) is not None


def topics(record: dict[str, Any]) -> tuple[str, ...]:
    """The fields of study (``s2fieldsofstudy`` categories, then ``fieldsofstudy``)."""
    names: list[str] = []
    for f in _get(record, "s2fieldsofstudy", "s2FieldsOfStudy") or []:
        if isinstance(f, dict) and isinstance(f.get("category"), str):
            names.append(f["category"])
    for f in _get(record, "fieldsofstudy", "fieldsOfStudy") or []:
        if isinstance(f, str):
            names.append(f)
    return tuple(dict.fromkeys(n for n in names if n))


def paper(record: dict[str, Any], source: str) -> Paper:
    """A Paper of one papers record (its ``abstract`` when it carries one; RecordError without a title)."""
    ext = _get(record, "externalids", "externalIds")
    ext = ext if isinstance(ext, dict) else {}
    journal: dict[str, Any] = record["journal"] if isinstance(record.get("journal"), dict) else {}
    types = record.get("publicationtypes") or record.get("publicationTypes") or []
    p = build_paper(
        source,
        title=record.get("title"),
        authors=[a.get("name") if isinstance(a, dict) else a for a in record.get("authors") or []
                 if isinstance(a, (dict, str))],
        year=record.get("year") or record.get("publicationdate") or record.get("publicationDate"),
        venue=record.get("venue") or journal.get("name"),
        abstract=record.get("abstract"),
        doi=ext.get("DOI"),
        arxiv_id=ext.get("ArXiv"),
        entry_type=next((_ENTRY_TYPES[t] for t in types if isinstance(t, str) and t in _ENTRY_TYPES), None)
        if isinstance(types, list) else None,
        pages=_text(journal.get("pages")),
        volume=_text(journal.get("volume")),
    )
    ids = [("s2", cid)] if (cid := corpus_id(record)) else []
    if isinstance(record.get("paperId"), str):
        ids.append(("s2paper", record["paperId"]))
    ids += [(scheme, str(ext[k])) for k, scheme in _OTHER_IDS.items() if ext.get(k) not in (None, "")]
    return replace(p, ids=tuple(ids), cited_by=citation_count(record.get("citationcount"), record.get("citationCount")))


FORMAT = DumpFormat("s2", looks_like, paper, topics)


def read_s2(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from a Semantic Scholar papers part file (gzip or plain); no join (see :class:`AbstractsTable`)."""
    return read_dump(path, FORMAT)


def read_s2_abstracts(path: Path) -> Iterator[Paper | ImportFailure]:
    """An ``abstracts`` part alone holds no papers: one failure saying to import it with its papers parts."""
    yield ImportFailure(path.name, "this is a Semantic Scholar abstracts file, not papers: import it in one "
                        "command with the papers files (citefinder library import papers-*.gz abstracts-*.gz) "
                        "so that each paper gets its abstract")


class AbstractsTable:
    """The ``abstracts`` dataset keyed by corpus id in a SQLite file (the join in bounded memory).

    Each file loaded is remembered with its size and modification time, so a resumed import does not load it
    again; a file interrupted while loading is loaded again whole (rows are replaced, never doubled).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._con = sqlite3.connect(self.path)
        self._con.execute("CREATE TABLE IF NOT EXISTS abstracts (corpusid TEXT PRIMARY KEY, abstract TEXT NOT NULL)")
        self._con.execute("CREATE TABLE IF NOT EXISTS loaded (file TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER)")
        self._con.commit()

    def loaded(self, file: Path) -> bool:
        st = file.stat()
        row = self._con.execute("SELECT size, mtime_ns FROM loaded WHERE file = ?", (str(file.resolve()),)).fetchone()
        return row is not None and tuple(row) == (st.st_size, st.st_mtime_ns)

    def load(self, file: Path) -> tuple[int, list[ImportFailure]]:
        """Load one abstracts file; returns (abstracts stored, the lines that could not be read)."""
        failures: list[ImportFailure] = []
        n = 0

        def rows() -> Iterable[tuple[str, str]]:
            nonlocal n
            for _, item in positioned_records(file):
                if isinstance(item, ImportFailure):
                    failures.append(item)
                elif (cid := corpus_id(item)) and isinstance(item.get("abstract"), str) and item["abstract"].strip():
                    n += 1
                    yield cid, item["abstract"]

        batch: list[tuple[str, str]] = []
        for row in rows():
            batch.append(row)
            if len(batch) >= LOAD_BATCH:
                self._con.executemany("INSERT OR REPLACE INTO abstracts VALUES (?, ?)", batch)
                batch = []
        self._con.executemany("INSERT OR REPLACE INTO abstracts VALUES (?, ?)", batch)
        st = file.stat()
        self._con.execute("INSERT OR REPLACE INTO loaded VALUES (?, ?, ?)",
                          (str(file.resolve()), st.st_size, st.st_mtime_ns))
        self._con.commit()
        return n, failures

    def joined(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` with its abstract from the table when it carries none."""
        if record.get("abstract") or not (cid := corpus_id(record)):
            return record
        row = self._con.execute("SELECT abstract FROM abstracts WHERE corpusid = ?", (cid,)).fetchone()
        return {**record, "abstract": row[0]} if row else record

    def close(self) -> None:
        self._con.close()
