"""``fill --literature LIBRARY``: the papers not in your library, listed under each slot, and the ones you add
(``--add-from-literature``) written to a separate ``new-references.bib`` and cited in the filled draft.

Adding a paper is explicit, one of two ways:

- ``--add-from-literature 3:1,7:2``: slot 3's first and slot 7's second literature paper of *this* run (the
  numbers printed under each slot), which needs ``--literature`` (or the ``literature`` setting);
- ``--add-from-literature results.json``: a ``--json`` file of an earlier fill, each chosen paper marked
  ``"add": true`` in its slot's ``"literature"`` list; the slot's sentence must still be the same.

Each added paper gets a key in the style of the user's own keys, unique against every key the run writes (made
by :mod:`citefinder.workflow.add_paper`, as on the Cite page), its DOI and arXiv fields, and joins the library
(never the user's .bib: ``new-references.bib`` holds its entry, to append to the .bib or name beside it,
``\\bibliography{refs,new-references}``). The file grows: a later addition keeps the entries it holds, and its
keys stay citable (a later fill cites a paper added earlier by the key that file holds).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import InputError
from citefinder.types import Candidate, Paper, SlotResult

if TYPE_CHECKING:
    from citefinder.workflow.add_paper import MarkedPicks

__all__ = ["LiteratureRequest", "add_literature_arguments", "add_picked", "attach", "finish", "plan_literature",
           "with_literature_lines", "with_keys_to_be"]

NEW_REFERENCES = "new-references.bib"
LISTED = 5  # literature papers listed under a slot
_PICK = re.compile(r"^\s*(\d+)\s*:\s*(\d+)\s*$")


def add_literature_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--literature", metavar="LIBRARY",
                   help="a literature library folder (or an online source's name) searched beside your library; "
                        "its papers are listed under each slot as 'not in your library', never filled in "
                        "(default: the literature setting)")
    p.add_argument("--literature-when", choices=("unsure", "always"),
                   help="search the literature for the slots none of your papers fills confidently (unsure, the "
                        "default) or for every slot")
    p.add_argument("--add-from-literature", metavar="SLOT:RANK[,...]|RESULTS.json",
                   help="add these literature papers (3:1 = slot 3's first) to your library, write their entries "
                        "to --new-references and cite them in the filled draft; or a --json file of an earlier "
                        "fill with the chosen papers marked \"add\": true")
    p.add_argument("--new-references", type=Path, metavar="FILE.bib",
                   help=f"where the added papers' entries go (default: {NEW_REFERENCES} beside the draft); "
                        "never your own .bib")


@dataclass
class LiteratureRequest:
    """What the user asked of the literature in this fill."""

    spec: str | None = None
    when: str | None = None
    picks: list[tuple[int, int]] = field(default_factory=list)  # (slot index, 1-based rank) of this run
    chosen: dict[int, list[Candidate]] = field(default_factory=dict)  # slot index -> papers from a JSON file
    sentences: dict[int, str] = field(default_factory=dict)  # the JSON's sentence of each slot it adds to
    out: Path | None = None
    references: Path | None = None  # new-references.bib of this draft (or --new-references), written or not
    held_keys: set[str] = field(default_factory=set)  # the keys it holds already: citable, never given again
    added: list[Paper] = field(default_factory=list)
    added_to: dict[int, list[tuple[Paper, float]]] = field(default_factory=dict)  # slot -> (paper, confidence)

    @property
    def adding(self) -> bool:
        return bool(self.picks or self.chosen)


def plan_literature(args: argparse.Namespace, settings: Any, plan: Any, draft: Path) -> LiteratureRequest:
    """Read the literature options (before any work) and plan ``new-references.bib`` when papers are added."""
    spec = getattr(args, "literature", None) or getattr(settings, "literature", "") or None
    request = LiteratureRequest(spec=spec, when=getattr(args, "literature_when", None))
    given = getattr(args, "add_from_literature", None)
    if given:
        if given.strip().lower().endswith(".json"):
            marked = _from_json(Path(given))
            request.chosen = {i: list(cs) for i, cs in marked.chosen.items()}
            request.sentences = dict(marked.sentences)
        else:
            request.picks = _picks(given)
            if spec is None:
                raise InputError("--add-from-literature SLOT:RANK names the literature papers of this run: give "
                                 "--literature LIBRARY too (or the --json file of the run that listed them).")
    elif getattr(args, "new_references", None) is not None:
        raise InputError("--new-references names where added literature papers go: give --add-from-literature too.")
    from citefinder.text.safewrite import resolve
    from citefinder.workflow.add_paper import bib_keys

    request.references = resolve(args.new_references or draft.expanduser().resolve().parent / NEW_REFERENCES)
    request.held_keys = bib_keys(request.references)
    if request.adding:
        request.out = plan.target("--new-references", request.references)
    return request


def _picks(text: str) -> list[tuple[int, int]]:
    picks = []
    for part in text.split(","):
        m = _PICK.match(part)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise InputError(f"--add-from-literature {text}: write SLOT:RANK pairs such as 3:1,7:2 (slot 3's first "
                             "literature paper), or a .json file.")
        picks.append((int(m.group(1)) - 1, int(m.group(2))))
    return picks


def _from_json(path: Path) -> MarkedPicks:
    from citefinder.workflow.add_paper import picks_from_results

    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"Cannot read {path} as the --json file of a fill: {e}") from e
    return picks_from_results(rows, str(path))


def attach(request: LiteratureRequest, settings: Any, pipeline: Any) -> None:
    """Give the pipeline its literature tier when one is named (opened now: a bad folder fails before the fill)."""
    if request.spec is None:
        return
    from citefinder.pipeline.literature import literature_tier

    when = request.when or settings.literature_when
    pipeline.literature = literature_tier(settings, pipeline.library, request.spec,
                                          when="always" if when == "always" else "unsure")
    which = "every slot" if when == "always" else "the slots none of your papers fills confidently"
    print(f"searching the literature in {request.spec} for {which}", file=sys.stderr)
    if pipeline.literature is not None and pipeline.literature.sends:  # said before the first call
        print(f"asking {pipeline.literature.name}: {pipeline.literature.sends}", file=sys.stderr)


def with_keys_to_be(results: list[SlotResult], library: Any, bib_keys: set[str] | None = None,
                    request: LiteratureRequest | None = None) -> list[SlotResult]:
    """The results with each literature paper given the key it gets if added (:class:`~citefinder.workflow.
    add_paper.Keys`: in the user's key style, unique against every key the run writes; the same paper keeps one
    key in every slot)."""
    from citefinder.workflow.add_paper import Keys

    if not any(r.literature for r in results):
        return results
    keys = Keys(library, {*(bib_keys or ()), *(request.held_keys if request else ())})
    out = []
    for r in results:
        shown = tuple(replace(c, paper=replace(c.paper, key=keys.key(c))) for c in r.literature)
        out.append(replace(r, literature=shown))
    return out


def as_chosen(results: Sequence[SlotResult], request: LiteratureRequest) -> list[SlotResult]:
    """For the lines printed: each slot the user added literature papers to shows them as its (manual) pick,
    with the literature's confidence in the first."""
    from citefinder.types import Selection

    out = []
    for r in results:
        added = request.added_to.get(r.slot.index, []) if r.slot is not None else []
        if added:
            papers = tuple(p for p, _ in added)
            r = replace(r, selection=Selection("found", papers[0], added[0][1], "manual",
                                               "added from the literature", also=papers[1:]))
        out.append(r)
    return out


def with_literature_lines(lines: Sequence[str], results: Sequence[SlotResult]) -> list[str]:
    """``lines`` (slot_lines' output) with, after each slot's line(s), the literature papers it was offered."""
    from citefinder.pipeline.offers import panel

    offered = {r.slot.index + 1: r.literature for r in results if r.slot is not None and r.literature}
    out: list[str] = []
    current: int | None = None
    for line in [*lines, None]:
        m = re.match(r"^Slot (\d+) \(", line) if line is not None else None
        if (m or line is None) and current in offered:
            source = offered[current][0].origin
            shown = panel(offered[current], limit=LISTED)  # by probability; below the floor: said, not listed
            out.append(f"  not in your library ({source}):" + ("" if shown.open else f" {shown.heading}"))
            out += [f"    {n}. {c.paper.key} {c.paper.title} ({c.paper.year or 'n.d.'})"
                    + (f"  {c.paper.link}" if c.paper.link else "") for n, c in enumerate(shown.open, 1)]
        if m:
            current = int(m.group(1))
        if line is not None:
            out.append(line)
    return out


def add_picked(request: LiteratureRequest, results: Sequence[SlotResult], slot_keys: dict[int, list[str]],
               plan: Any, library: Any, bib_keys: set[str] | None = None) -> dict[int, list[str]]:
    """Plan ``new-references.bib`` with the added papers' entries; the slots they were added to cite their keys
    (in place of the engine's pick). Nothing is written here: the plan commits with the fill's other files."""
    if not request.adding:
        return slot_keys
    from citefinder.text import written
    from citefinder.workflow.add_paper import Keys, new_references

    by_slot = {r.slot.index: r for r in results if r.slot is not None}
    chosen: dict[int, list[Candidate]] = {}
    for index, rank in request.picks:
        r = by_slot.get(index)
        if r is None or rank > len(r.literature):
            offered = len(r.literature) if r is not None else 0
            raise InputError(f"--add-from-literature {index + 1}:{rank}: slot {index + 1} "
                             + (f"was offered {offered} literature papers" if r is not None else "is not in the draft")
                             + " (nothing was written).")
        chosen.setdefault(index, []).append(r.literature[rank - 1])
    for index, candidates in request.chosen.items():
        r = by_slot.get(index)
        if r is None or r.slot is None or r.slot.sentence != request.sentences.get(index):
            raise InputError(f"slot {index + 1} of the --add-from-literature file is not the same sentence in the "
                             "draft now; fill again with --json and mark the papers there (nothing was written).")
        chosen.setdefault(index, []).extend(candidates)
    # unique against every key the run writes: the .bib's, new-references.bib's, the keys the draft now cites
    keys = Keys(library, {*(bib_keys or ()), *request.held_keys, *(k for ks in slot_keys.values() for k in ks)})
    papers = {index: [keys.paper(c, shown=c.paper.key) for c in cs] for index, cs in chosen.items()}
    unique = list({p.doc_id: p for ps in papers.values() for p in ps}.values())
    assert request.out is not None
    held = request.out.read_text(encoding="utf-8") if written.is_ours(request.out, None) else ""
    bib, given = new_references(unique, held, request.held_keys if held else ())
    plan.put(request.out, bib.encode("utf-8"))
    request.added = unique
    for index, ps in papers.items():
        scores = {c.doc_id: (s.score if (s := c.stage("literature")) else 0.0) for c in chosen[index]}
        request.added_to[index] = [(p, scores.get(p.doc_id, 0.0)) for p in ps]
    out = dict(slot_keys)
    for index, ps in papers.items():
        if out.get(index):
            print(f"  slot {index + 1}: cites the paper you added instead of {','.join(out[index])}", file=sys.stderr)
        out[index] = list(dict.fromkeys(given[p.doc_id] for p in ps))
    return out


def finish(request: LiteratureRequest, library: Any) -> None:
    """After the files are written: the added papers join the library (said in one line)."""
    if not request.added:
        return
    report = library.add_papers(request.added)
    print(f"added {len(request.added)} paper{'s' if len(request.added) != 1 else ''} from the literature to the "
          f"library {library.path} ({report.added} new) and their entries to {request.out}; add those entries to "
          "your .bib (or name the file beside it: \\bibliography{refs,new-references})")
