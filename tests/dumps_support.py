"""The small dump files under tests/data/dumps that the dump import tests read (arXiv snapshot, an OpenAlex part,
a Semantic Scholar papers part and its abstracts part)."""

from __future__ import annotations

from pathlib import Path

DUMPS = Path(__file__).resolve().parent / "data" / "dumps"
ARXIV = DUMPS / "arxiv-metadata-oai-snapshot.json"
OPENALEX = DUMPS / "openalex" / "data" / "works" / "updated_date=2024-01-01" / "part_000.gz"
OA_NAME = "updated_date=2024-01-01/part_000.gz"  # how papers and failures name an OpenAlex part
S2_PAPERS = DUMPS / "s2" / "papers-part0.gz"
S2_ABSTRACTS = DUMPS / "s2" / "abstracts-part0.gz"
