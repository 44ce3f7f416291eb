"""Checking a draft's citations, once for both faces: does every cited key fit its context, which papers fit it
better, is the .bib in order; the citations judged to fit (and the keys the user chose instead) join the memory;
``--fix OLD=NEW`` replaces keys in the draft's text.

``citefinder check`` (``cli/check.py``) opens the .bib's library (saying its link reports), calls these and turns
the :class:`~citefinder.check.draft.CheckReport` into a table and the one writer's outputs; the Check page
(``ui/check_view.py``) pairs the uploaded .bib its own way and calls :func:`check_draft` too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.workflow.fill import draft_name

log = logging.getLogger(__name__)

__all__ = ["check_draft", "checking_pipeline", "fixed_texts", "key_docs", "learn_fitting", "learn_fixes",
           "open_reference"]


def open_reference(folder: Path) -> Any:
    """The reference library (read only) the .bib's entries are matched against (``--against``)."""
    from citefinder.library.reference import ReferenceLibrary

    return ReferenceLibrary.open(folder)


def checking_pipeline(settings: Any, library: Any) -> Any:
    """The pipeline over the .bib's library, its model loaded first (the check's trace times the search only)."""
    from citefinder.pipeline.pipeline import Pipeline

    library.embedder.encode(["warm up"])
    return Pipeline(settings, library)


def check_draft(pipeline: Any, project: Any, bibs: Sequence[Path], *, reference: Any = None,
                progress: Callable[[int, int], None] | None = None) -> Any:
    """Every cited key of ``project`` judged against its context (:func:`citefinder.check.draft.check_project`)."""
    from citefinder.check.draft import check_project

    return check_project(pipeline, project, list(bibs), reference=reference, progress=progress)


def learn_fitting(library: Any, project: Any, report: Any, settings: Any) -> int:
    """The citations that fit, kept as the user wrote them, join the memory (what CiteFinder wrote there is not
    the user's choice); returns how many pairs were new."""
    from citefinder.check.draft import fitting_pairs
    from citefinder.library.contexts.api import learn_picks
    from citefinder.text.written import cites_written

    ours = cites_written([f.path for f in project.files])
    return learn_picks(library, fitting_pairs(project, report, ours), citing=draft_name(project), source="check",
                       settings=settings)


def fixed_texts(project: Any, fixes: Mapping[str, str], bibs: Sequence[Path]) -> dict[int, str]:
    """file index -> its text with the chosen citations' keys replaced (:func:`citefinder.check.draft.
    fix_project`); InputError when a new key is in no .bib given or no citation has the key to replace."""
    from citefinder.check.draft import bib_entries, fix_project

    if bibs:  # a key no .bib holds would leave the draft citing nothing
        held = set(bib_entries(bibs)[0])
        unknown = sorted({new for new in fixes.values() if new not in held})
        if unknown:
            raise InputError(f"{', '.join(unknown)}: no such key in {', '.join(b.name for b in bibs)}; "
                             "nothing was written (add the entry to your .bib first).")
    changed = fix_project(project, fixes)
    if not changed:
        raise InputError(f"{', '.join(fixes)}: no such citation in {project.main.name}; nothing to replace.")
    return changed


def key_docs(library: Any, bibs: Sequence[Path]) -> dict[str, str]:
    """Each key of the .bib files -> the library paper it is (:func:`citefinder.check.draft.key_docs`)."""
    from citefinder.check.draft import bib_entries
    from citefinder.check.draft import key_docs as docs_of

    return docs_of(library, bib_entries(bibs)[0])


def learn_fixes(library: Any, project: Any, fixes: Mapping[str, str], doc_of: Mapping[str, str],
                settings: Any) -> int:
    """The replacements the user chose join the memory: each fixed citation's sentence with its new key's paper
    (``doc_of``: :func:`key_docs`; a new key the .bib lacks teaches nothing)."""
    from citefinder.check.draft import fixed_pairs
    from citefinder.library.contexts.api import learn_picks

    return learn_picks(library, fixed_pairs(project, fixes, doc_of), citing=draft_name(project),
                       source="check-fix", settings=settings)
