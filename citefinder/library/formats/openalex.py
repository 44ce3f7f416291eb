"""OpenAlex works: the snapshot's JSON Lines (``data/works/updated_date=YYYY-MM-DD/part_000.gz``), one work
object a line, as the API returns it::

    {"id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375",
     "title": ..., "display_name": ..., "publication_year": 2018, "type": "article",
     "ids": {"openalex": ..., "doi": ..., "mag": 2741809807, "pmid": ...},
     "authorships": [{"author": {"id": ..., "display_name": "Heather Piwowar"}, "raw_author_name": ...}],
     "primary_location": {"landing_page_url": ..., "pdf_url": ..., "source": {"display_name": "PeerJ"}},
     "biblio": {"volume": "6", "issue": null, "first_page": "e4375", "last_page": null},
     "locations": [...], "abstract_inverted_index": {"Despite": [0], "growing": [1], ...},
     "primary_topic": {"display_name": ..., "subfield": {...}, "field": {...}, "domain": {...}},
     "concepts": [{"display_name": "Computer science", "level": 0, "score": 0.62}, ...]}

The abstract is rebuilt from its inverted index (each word at each of its positions). The arXiv id comes from
a location whose landing page or PDF is on arxiv.org, or an arXiv DOI. The OpenAlex id (and MAG / PubMed ids)
go to ``Paper.ids``, ``cited_by_count`` (how often OpenAlex counts the work cited) to ``Paper.cited_by``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from citefinder.library.formats.common import arxiv_id_in_text, build_paper, citation_count, clean_space
from citefinder.library.formats.lines import DumpFormat, read_dump
from citefinder.types import ImportFailure, Paper

MAX_ABSTRACT_WORDS = 20_000  # an inverted index claiming more positions is not an abstract
MIN_CONCEPT_SCORE = 0.3  # concepts below it are OpenAlex's weak guesses: not what --category should match
# OpenAlex work types as the BibTeX entry types exports write (others: none, the writer chooses)
_ENTRY_TYPES = {"article": "article", "book-chapter": "incollection", "book": "book", "dissertation": "phdthesis",
                "report": "techreport", "proceedings-article": "inproceedings"}


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else {} (a null or malformed part of a work)."""
    return value if isinstance(value, dict) else {}


def looks_like(record: dict[str, Any]) -> bool:
    """An OpenAlex work: an inverted-index abstract, authorships, or an openalex.org W id."""
    return ("abstract_inverted_index" in record or "authorships" in record
            or str(record.get("id") or "").startswith("https://openalex.org/W"))


def decode_inverted_index(index: Any) -> str:
    """The text of an ``abstract_inverted_index`` (``{"word": [positions]}``): each word at each of its
    positions, in order; missing positions are skipped; "" for anything that is not an index."""
    if not isinstance(index, dict):
        return ""
    placed: list[tuple[int, str]] = []
    for word, positions in index.items():
        if not isinstance(positions, list):
            continue
        placed.extend((p, str(word)) for p in positions if isinstance(p, int) and not isinstance(p, bool) and p >= 0)
        if len(placed) > MAX_ABSTRACT_WORDS:
            return ""
    placed.sort()
    return clean_space(" ".join(w for _, w in placed))


def short_id(value: Any) -> str | None:
    """``https://openalex.org/W2741809807`` -> ``W2741809807``; None for anything else."""
    text = str(value or "").strip().rstrip("/")
    tail = text.rsplit("/", 1)[-1]
    return tail if tail[:1].upper() == "W" and tail[1:].isdigit() else None


def _arxiv_id(record: dict[str, Any]) -> str | None:
    locations = [record.get("primary_location"), record.get("best_oa_location"), *(record.get("locations") or [])]
    for loc in locations:
        if isinstance(loc, dict):
            for field in ("landing_page_url", "pdf_url"):
                if "arxiv.org" in str(loc.get(field) or "") and (aid := arxiv_id_in_text(str(loc.get(field)))):
                    return aid
    return None


def _authors(record: dict[str, Any]) -> list[str]:
    names = []
    for a in record.get("authorships") or []:
        if isinstance(a, dict):
            name = _obj(a.get("author")).get("display_name") or a.get("raw_author_name")
            if isinstance(name, str) and name.strip():
                names.append(name)
    return names


def _venue(record: dict[str, Any]) -> Any:
    """The primary location's source, unless it is a repository (arXiv) and another location is a journal or
    conference: then that one (where the work was published)."""
    primary = _obj(_obj(record.get("primary_location")).get("source"))
    if primary.get("type") == "repository":
        for loc in record.get("locations") or []:
            source = _obj(_obj(loc).get("source"))
            if source.get("type") in ("journal", "conference", "book series") and source.get("display_name"):
                return source["display_name"]
    return primary.get("display_name")


def _pages(record: dict[str, Any]) -> str | None:
    """``biblio``'s first and last page as "first--last" (or the first alone)."""
    biblio = _obj(record.get("biblio"))
    first, last = (str(biblio.get(k) or "").strip() for k in ("first_page", "last_page"))
    return (f"{first}--{last}" if last and last != first else first) or None


def _ids(record: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    ids = _obj(record.get("ids"))
    out = [("openalex", w)] if (w := short_id(record.get("id") or ids.get("openalex"))) else []
    if ids.get("mag") not in (None, ""):
        out.append(("mag", str(ids["mag"])))
    if ids.get("pmid"):
        out.append(("pmid", str(ids["pmid"]).rstrip("/").rsplit("/", 1)[-1]))
    return tuple(out)


def topics(record: dict[str, Any]) -> tuple[str, ...]:
    """The primary topic's name, subfield, field and domain, then the concepts OpenAlex is confident of."""
    names: list[str] = []
    topic = _obj(record.get("primary_topic"))
    names.append(topic.get("display_name") or "")
    names.extend(_obj(topic.get(part)).get("display_name") or "" for part in ("subfield", "field", "domain"))
    for c in record.get("concepts") or []:
        if isinstance(c, dict) and isinstance(c.get("score"), (int, float)) and c["score"] >= MIN_CONCEPT_SCORE:
            names.append(c.get("display_name") or "")
    return tuple(n for n in names if isinstance(n, str) and n)


def paper(record: dict[str, Any], source: str) -> Paper:
    """A Paper of one work (RecordError without a title)."""
    ids = _obj(record.get("ids"))
    p = build_paper(
        source,
        title=record.get("title") or record.get("display_name"),
        authors=_authors(record),
        year=record.get("publication_year"),
        venue=_venue(record),
        abstract=decode_inverted_index(record.get("abstract_inverted_index")),
        doi=record.get("doi") or ids.get("doi"),
        arxiv_id=_arxiv_id(record),
        entry_type=_ENTRY_TYPES.get(str(record.get("type") or "")),
        pages=_pages(record),
        volume=_obj(record.get("biblio")).get("volume") or None,
    )
    return replace(p, ids=_ids(record), cited_by=citation_count(record.get("cited_by_count")))


FORMAT = DumpFormat("openalex", looks_like, paper, topics)


def read_openalex(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from an OpenAlex works part file (gzip or plain), one line at a time."""
    return read_dump(path, FORMAT)
