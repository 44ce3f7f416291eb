"""Learning from picks and forgetting them, once for both faces.

A change of the user's picks on the Cite page (``ui/cite/learn.py``) is learned and forgotten here
(:func:`learn_change`); ``citefinder contexts forget KEY`` (``cli/contexts.py``) forgets a paper's learned picks
in one draft or every one (:func:`forget_paper`). ``fill`` and ``check`` learn through
:mod:`citefinder.workflow.fill` and :mod:`citefinder.workflow.check`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from citefinder.errors import InputError

log = logging.getLogger(__name__)

__all__ = ["Forgotten", "draft_identity", "draft_names", "forget_paper", "learn_change"]


def learn_change(library: Any, draft: str, pairs: Sequence[tuple[str, str]], taken_back: Sequence[tuple[str, str]],
                 settings: Any, *, source: str) -> int:
    """The memory work of a change of the picks of ``draft`` (the name its picks are learned under): the pairs
    the user took back are forgotten in this draft only (the same pick learned in another draft, or by ``fill``
    and ``check``, stays); the new ones are learned. Returns how many pairs were new."""
    from citefinder.library.contexts.api import forget_picks, learn_picks

    if taken_back:
        forget_picks(library, list(taken_back), citing=draft, source=source)
    if not pairs:
        return 0
    return learn_picks(library, list(pairs), citing=draft, source=source, settings=settings)


def draft_identity(name: str | None, text: str) -> str:
    """The one name of a draft in the memory, for both faces (its picks are co-cited with each other, and "forget
    in this draft only" means this name): ``draft:`` + the file's name (``main.tex``: the CLI's main file, the
    page's upload), so the same file filled from the CLI and uploaded on the page is one draft, whatever edits
    (an in-place fill included) change in it. Two projects whose main files have one name share it: the page
    knows no more of a file than its name. Text pasted on the page, without a file: ``draft:`` + a hash of its
    start (spaces normalised; an edit further on keeps the name)."""
    if name:
        return f"draft:{PurePath(name).name}"
    start = " ".join(text[:4000].split())[:2000]
    return "draft:" + hashlib.sha1(start.encode("utf-8")).hexdigest()[:12]


def draft_names(draft: str) -> set[str]:
    """The names the memory may know a draft by: an existing file is known by :func:`draft_identity` (and by the
    name earlier versions of ``fill`` and ``check`` gave it: ``draft:`` + its resolved path); anything else is a
    name as listed (``draft:paper.tex``, with or without ``draft:``)."""
    path = Path(draft).expanduser()
    if path.is_file():
        return {f"draft:{path.resolve()}", draft_identity(path.name, "")}
    return {draft, f"draft:{draft}"}


@dataclass(frozen=True)
class Forgotten:
    """What forgetting a paper's picks did: its label, the drafts it was forgotten in, how many picks, the drafts
    that held picks of it, and how many contexts the memory holds now."""

    label: str
    drafts: tuple[str, ...]
    count: int
    holding: tuple[str, ...]
    contexts: int


def forget_paper(library: Any, paper: str, *, sentence: str | None = None, draft: str | None = None,
                 all_drafts: bool = False) -> Forgotten:
    """The learned picks of ``paper`` (a key or doc_id) in one draft (``draft``; the only one holding any; or
    every one with ``all_drafts``); several drafts and no choice: an InputError saying which, nothing forgotten."""
    from citefinder.library.contexts import api

    found = library.by_key(paper) or next(iter(library.get([paper])), None)
    if found is None:
        raise InputError(f"{paper}: no paper of the library {library.path} has this key or doc_id; nothing was "
                         "forgotten (picks learned by fill --bib and check are in the library beside the .bib: "
                         "--bib REFS.bib).")
    label = found.key or found.doc_id
    holding = api.drafts_holding(library, found.doc_id, sentence)
    if draft is not None and all_drafts:
        raise InputError("--draft forgets one draft's picks, --all-drafts every draft's: give one of them.")
    drafts: Collection[str]
    if draft is not None:
        drafts = [d for d in holding if d in draft_names(draft)]
    elif all_drafts or len(holding) <= 1:
        drafts = list(holding)
    else:
        listed = "; ".join(f"{d} ({n})" for d, n in holding.items())
        raise InputError(f"{len(holding)} drafts hold learned picks of {label}: {listed}. Give --draft DRAFT (its "
                         "main .tex or the name shown) or --all-drafts; nothing was forgotten.")
    n = api.forget_picks(library, doc_id=found.doc_id, containing=sentence, citing=drafts) if drafts else 0
    return Forgotten(label=label, drafts=tuple(drafts), count=n, holding=tuple(holding),
                     contexts=api.memory_counts(library)["contexts"])
