"""A source opened by what the user names: a literature library folder (``~/literature/arxiv-cs``) or an
online service (``openalex``, ``s2``, ``arxiv``, ``crossref``). The services are declared here, one line
each, and imported only when named (their clients are optional extras: ``pip install 'citefinder[online]'``)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from citefinder.errors import SourceError
from citefinder.sources.base import Source

# name -> "module:factory"; factory(settings) -> Source (citefinder/sources/online, the extra citefinder[online]).
SERVICES: dict[str, str] = {
    "openalex": "citefinder.sources.online.openalex:open_openalex",
    "s2": "citefinder.sources.online.s2:open_s2",
    "arxiv": "citefinder.sources.online.arxiv_api:open_arxiv",
    "crossref": "citefinder.sources.online.crossref:open_crossref",
}


def open_source(spec: str | Path, settings: Any) -> Source:
    """The source ``spec`` names: an online service by name, else a literature library folder."""
    name = str(spec).strip()
    if name.lower() in SERVICES:
        module, _, factory = SERVICES[name.lower()].partition(":")
        return getattr(importlib.import_module(module), factory)(settings)
    folder = Path(name).expanduser()
    if folder.is_dir():
        from citefinder.sources.local import LocalLiterature

        return LocalLiterature.open(folder)
    services = ", ".join(sorted(SERVICES)) or "none installed"
    raise SourceError(f"{name}: no such literature library folder, and not an online source ({services}). "
                      "Build a literature library with `citefinder library import` of an arXiv, OpenAlex or "
                      "Semantic Scholar dump, or name a service.")
