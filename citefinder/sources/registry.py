"""A source opened by what the user names: a literature library folder (``~/literature/arxiv-cs``) or an
online service (``openalex``, ``s2``, ``arxiv``, ``crossref``, ``dblp``). The services are declared here, one line
each, and imported only when named (their clients are optional extras: ``pip install 'citefinder[online]'``).

One rule, for every command and page (``--from``, ``--literature``, the setting ``literature``), decided by
:func:`resolve` before anything is opened or sent:

- ``arxiv:`` (a service's name and a colon) is the service;
- a path (``./arxiv``, ``~/lit``, ``/data/arxiv``, anything with a ``/``) is a folder;
- a bare service name (``arxiv``) is the service, unless something of that name exists in the working folder:
  then it could be either, and it is refused with both spellings, nothing sent;
- any other name is a folder.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from citefinder.errors import SourceError
from citefinder.sources.base import Source

# name -> "module:factory"; factory(settings) -> Source (citefinder/sources/online, the extra citefinder[online]).
SERVICES: dict[str, str] = {
    "openalex": "citefinder.sources.online.openalex:open_openalex",
    "s2": "citefinder.sources.online.s2:open_s2",
    "arxiv": "citefinder.sources.online.arxiv_api:open_arxiv",
    "crossref": "citefinder.sources.online.crossref:open_crossref",
    "dblp": "citefinder.sources.online.dblp:open_dblp",
}


@dataclass(frozen=True)
class Named:
    """What a name given as the literature resolves to: an online ``service`` (its registry name) or a ``folder``."""

    kind: Literal["service", "folder"]
    service: str = ""
    folder: Path | None = None

    @property
    def label(self) -> str:
        """How pages and lines name it: the service's name, the folder's own name."""
        return self.service if self.kind == "service" else (self.folder.name if self.folder else "")


def resolve(spec: str | Path) -> Named:
    """What ``spec`` names, by the module's rule; a :class:`SourceError` when it could be both a folder here and a
    service (said before anything is sent)."""
    if isinstance(spec, Path):
        return Named("folder", folder=spec.expanduser())
    name = spec.strip()
    bare = name[:-1] if name.endswith(":") else name
    if bare.lower() in SERVICES and (name.endswith(":") or not Path(name).exists()):
        return Named("service", service=bare.lower())
    if bare.lower() in SERVICES:
        raise SourceError(f"{name} could be the folder ./{name} here or the online service {bare.lower()}: write "
                          f"./{name} for the folder, or {bare.lower()}: for the service. Nothing was sent.")
    if name.endswith(":") and "/" not in name and "\\" not in name:
        raise SourceError(f"{name} is not an online source ({', '.join(SERVICES)}).")
    return Named("folder", folder=Path(name).expanduser())


def open_source(spec: str | Path, settings: Any) -> Source:
    """The source ``spec`` names (:func:`resolve`): an online service, else a literature library folder."""
    named = resolve(spec)
    if named.kind == "service":
        module, _, factory = SERVICES[named.service].partition(":")
        return getattr(importlib.import_module(module), factory)(settings)
    assert named.folder is not None
    if named.folder.is_dir():
        from citefinder.sources.local import LocalLiterature

        return LocalLiterature.open(named.folder)
    services = ", ".join(sorted(SERVICES)) or "none installed"
    raise SourceError(f"{spec}: no such literature library folder, and not an online source ({services}). "
                      "Build a literature library with `citefinder library import` of an arXiv, OpenAlex or "
                      "Semantic Scholar dump, or name a service.")


def check_literature(spec: str, settings: Any) -> Named:
    """What ``spec`` names, checked as the setting ``literature`` is chosen (nothing opened is asked): a folder
    must hold a CiteFinder library, a service's client must be installed; else a :class:`SourceError` that says
    how (the install command, the two spellings of an ambiguous name)."""
    named = resolve(spec)
    if named.kind == "service":
        open_source(spec, settings)  # the client package is imported here: missing, it says how to install it
        return named
    from citefinder.library.store.layout import is_library_folder

    if named.folder is None or not is_library_folder(named.folder):
        raise SourceError(f"{spec} is neither a CiteFinder library folder nor one of {', '.join(SERVICES)}.")
    return named


def what_is_sent(settings: Any) -> str:
    """What leaves this machine when the configured literature (the setting ``literature``) is used, in the words
    every command and page says before it sends; "" when nothing does (none set, a folder, or a source that cannot
    be opened, which sends nothing)."""
    spec = (getattr(settings, "literature", "") or "").strip()
    if not spec:
        return ""
    try:
        named = resolve(spec)
        if named.kind != "service":
            return ""
        return f"The literature is {named.service}: sent {open_source(spec, settings).sends}."
    except SourceError:
        return ""
