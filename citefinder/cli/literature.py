"""``fill --literature LIBRARY``: the papers not in your library, listed under each slot, and the ones you add
(``--add-from-literature``) written to a separate ``new-references.bib`` and cited in the filled draft
(:mod:`citefinder.workflow.literature` does it; this module reads the options and says the outcome).

- ``--add-from-literature 3:1,7:2``: slot 3's first and slot 7's second literature paper of *this* run (the
  numbers printed under each slot), which needs ``--literature`` (or the ``literature`` setting);
- ``--add-from-literature results.json``: the results file of an earlier fill (``--json``, or the Cite page's
  download), each chosen paper marked ``"add": true`` in its slot's ``"literature"`` list.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from citefinder.types import SlotResult
from citefinder.workflow.literature import NEW_REFERENCES, LiteratureAsk, as_chosen

__all__ = ["add_literature_arguments", "literature_ask", "outcome_lines", "shown", "with_literature_lines"]

LISTED = 5  # literature papers listed under a slot


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


def literature_ask(args: argparse.Namespace) -> LiteratureAsk:
    return LiteratureAsk(spec=getattr(args, "literature", None), when=getattr(args, "literature_when", None),
                         add=getattr(args, "add_from_literature", None),
                         new_references=getattr(args, "new_references", None))


def shown(outcome: Any) -> list[SlotResult]:
    """The results as said: a slot the user added literature papers to shows them as its (manual) pick."""
    return as_chosen(outcome.results, outcome.added_to)


def outcome_lines(outcome: Any, lines: Sequence[str]) -> list[str]:
    """What the fill added to the library (when it did), then ``lines`` (each slot's) with the literature."""
    added = len(outcome.added)
    said = [f"added {added} paper{'s' if added != 1 else ''} from the literature to the library "
            f"{outcome.library_path} ({outcome.added_new} new) and their entries to {outcome.references}; add those "
            "entries to your .bib (or name the file beside it: \\bibliography{refs,new-references})"] if added else []
    return said + with_literature_lines(lines, outcome.results)


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
