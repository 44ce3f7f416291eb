"""The literature of a fill, once for both faces: the tier given to the pipeline and *when* it is searched, the keys
its papers get if added, and the papers added (``fill --add-from-literature``; the Cite page's *Add to my library*
goes through :func:`citefinder.workflow.add_paper.add_to_library` with the same :class:`~citefinder.workflow.keys.
Keys`).

Adding is explicit, one of two ways: ``3:1,7:2`` (slot 3's first and slot 7's second literature paper of *this*
run, which needs a literature), or a fill's results file (:func:`citefinder.workflow.rows.result_rows`, the CLI's
``--json`` and the page's download alike) with the chosen papers marked ``"add": true``; the slot's sentence must
still be the same. The added papers' entries go to ``new-references.bib`` (never the user's .bib), which grows: a
later addition keeps the entries it holds, and its keys stay citable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from citefinder.errors import InputError
from citefinder.types import Candidate, Paper, Selection, SlotResult
from citefinder.workflow.keys import Keys

__all__ = ["NEW_REFERENCES", "Addition", "LiteratureAsk", "LiteraturePlan", "add_chosen", "as_chosen",
           "attach_literature", "keys_to_be", "plan_literature", "when_of"]

NEW_REFERENCES = "new-references.bib"
_PICK = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


@dataclass(frozen=True)
class LiteratureAsk:
    """What the user asked of the literature: where (a folder or a source's name; None: the setting), when
    (``unsure``, ``always``; None: the setting), which papers to add (``3:1,7:2`` or a results ``.json``) and
    where their entries go (None: ``new-references.bib`` beside the draft)."""

    spec: str | None = None
    when: str | None = None
    add: str | None = None
    new_references: Path | None = None


@dataclass(frozen=True)
class LiteraturePlan:
    """The literature of this fill, read before any work: the literature searched (None: none), when, the papers
    to add (``picks``: slot index and 1-based rank of this run; ``chosen``: papers of a results file, with
    their slots' ``sentences``), ``new-references.bib`` and the keys it holds (citable, never given again)."""

    spec: str | None
    when: str
    references: Path
    held_keys: frozenset[str] = frozenset()
    picks: tuple[tuple[int, int], ...] = ()
    chosen: Mapping[int, tuple[Candidate, ...]] = field(default_factory=dict)
    sentences: Mapping[int, str] = field(default_factory=dict)

    @property
    def adding(self) -> bool:
        return bool(self.picks or self.chosen)


def when_of(asked: str | None, settings: Any) -> str:
    """The one mapping of *when*: ``always`` searches every slot; anything else the slots none of the user's
    papers fills confidently (``unsure``)."""
    return "always" if (asked or getattr(settings, "literature_when", None)) == "always" else "unsure"


def plan_literature(ask: LiteratureAsk, settings: Any, draft: Path | None) -> LiteraturePlan:
    """Read the literature options (before any work): an InputError when they cannot be done."""
    from citefinder.text.safewrite import resolve
    from citefinder.workflow.add_paper import bib_keys, picks_from_results

    spec = ask.spec or getattr(settings, "literature", "") or None
    picks: list[tuple[int, int]] = []
    chosen: dict[int, tuple[Candidate, ...]] = {}
    sentences: dict[int, str] = {}
    if ask.add and ask.add.strip().lower().endswith(".json"):
        path = Path(ask.add)
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise InputError(f"Cannot read {path} as the --json file of a fill: {e}") from e
        marked = picks_from_results(rows, str(path))
        chosen, sentences = dict(marked.chosen), dict(marked.sentences)
    elif ask.add:
        picks = _picks(ask.add)
        if spec is None:
            raise InputError("--add-from-literature SLOT:RANK names the literature papers of this run: give "
                             "--literature LIBRARY too (or the --json file of the run that listed them).")
    elif ask.new_references is not None:
        raise InputError("--new-references names where added literature papers go: give --add-from-literature too.")
    folder = draft.expanduser().resolve().parent if draft is not None else Path.cwd()
    references = resolve(ask.new_references or folder / NEW_REFERENCES)
    return LiteraturePlan(spec, when_of(ask.when, settings), references, frozenset(bib_keys(references)),
                          tuple(picks), chosen, sentences)


def _picks(text: str) -> list[tuple[int, int]]:
    picks = []
    for part in text.split(","):
        m = _PICK.match(part)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise InputError(f"--add-from-literature {text}: write SLOT:RANK pairs such as 3:1,7:2 (slot 3's first "
                             "literature paper), or a .json file.")
        picks.append((int(m.group(1)) - 1, int(m.group(2))))
    return picks


def attach_literature(pipeline: Any, settings: Any, spec: str | None, when: str | None, *,
                      search: Any = None) -> Any:
    """Give ``pipeline`` its literature tier (opened now: a bad folder fails before the fill), searched
    :func:`when_of` ``when`` says; ``search``: one opened already (the page keeps it). Returns the tier (None
    when no literature is named)."""
    from citefinder.pipeline.literature import literature_tier

    if spec is None and search is None:
        return None
    pipeline.literature = literature_tier(settings, pipeline.library, spec, when=when_of(when, settings),  # type: ignore[arg-type]
                                          search=search)
    return pipeline.literature


def keys_to_be(results: Sequence[SlotResult], keys: Keys) -> list[SlotResult]:
    """The results with each literature paper given the key it gets if added (the same paper keeps one key in
    every slot)."""
    if not any(r.literature for r in results):
        return list(results)
    return [replace(r, literature=tuple(replace(c, paper=replace(c.paper, key=keys.key(c))) for c in r.literature))
            for r in results]


@dataclass(frozen=True)
class Addition:
    """Literature papers added in a fill: the papers (each once, as the user's), per slot the papers with the
    literature's confidence, and each slot's keys."""

    papers: tuple[Paper, ...] = ()
    by_slot: Mapping[int, tuple[tuple[Paper, float], ...]] = field(default_factory=dict)
    slot_keys: Mapping[int, list[str]] = field(default_factory=dict)


def _chosen(plan: LiteraturePlan, results: Sequence[SlotResult]) -> dict[int, list[Candidate]]:
    by_slot = {r.slot.index: r for r in results if r.slot is not None}
    chosen: dict[int, list[Candidate]] = {}
    for index, rank in plan.picks:
        r = by_slot.get(index)
        if r is None or rank > len(r.literature):
            offered = len(r.literature) if r is not None else 0
            raise InputError(f"--add-from-literature {index + 1}:{rank}: slot {index + 1} "
                             + (f"was offered {offered} literature papers" if r is not None else "is not in the draft")
                             + " (nothing was written).")
        chosen.setdefault(index, []).append(r.literature[rank - 1])
    for index, candidates in plan.chosen.items():
        r = by_slot.get(index)
        if r is None or r.slot is None or r.slot.sentence != plan.sentences.get(index):
            raise InputError(f"slot {index + 1} of the --add-from-literature file is not the same sentence in the "
                             "draft now; fill again with --json and mark the papers there (nothing was written).")
        chosen.setdefault(index, []).extend(candidates)
    return chosen


def add_chosen(plan: LiteraturePlan, results: Sequence[SlotResult], keys: Keys) -> Addition:
    """The papers the user chose to add, as the user's papers under their keys (the key shown when still free)."""
    chosen = _chosen(plan, results)
    papers = {index: [keys.paper(c, shown=c.paper.key) for c in cs] for index, cs in chosen.items()}
    unique = tuple({p.doc_id: p for ps in papers.values() for p in ps}.values())
    by_slot = {}
    for index, ps in papers.items():
        scores = {c.doc_id: (s.score if (s := c.stage("literature")) else 0.0) for c in chosen[index]}
        by_slot[index] = tuple((p, scores.get(p.doc_id, 0.0)) for p in ps)
    slot_keys = {index: list(dict.fromkeys(str(p.key) for p in ps)) for index, ps in papers.items()}
    return Addition(unique, by_slot, slot_keys)


def as_chosen(results: Sequence[SlotResult], by_slot: Mapping[int, Sequence[tuple[Paper, float]]]) -> list[SlotResult]:
    """Each slot the user added literature papers to shows them as its (manual) pick, with the literature's
    confidence in the first."""
    out = []
    for r in results:
        added = by_slot.get(r.slot.index, ()) if r.slot is not None else ()
        if added:
            papers = tuple(p for p, _ in added)
            r = replace(r, selection=Selection("found", papers[0], added[0][1], "manual",
                                               "added from the literature", also=papers[1:]))
        out.append(r)
    return out
