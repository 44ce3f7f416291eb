"""One key for every new or keyless paper (issue 48): :meth:`citefinder.workflow.keys.Keys.key_of`, reserved against
every key of the run and of the paired .bib ignoring case as BibTeX does; the key a card shows is the key the
downloaded .bib holds; the results file of either face is read back by ``--add-from-literature FILE``."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from citefinder.text.slots import find_slots
from citefinder.types import Candidate, Paper, Query, Selection, SlotResult
from citefinder.ui import exports
from citefinder.workflow.add_paper import picks_from_results
from citefinder.workflow.keys import Keys
from citefinder.workflow.literature import keys_to_be
from citefinder.workflow.rows import result_rows

MULLER = Paper("lit:muller", "Ranking with Sparse Signals", ("Hans Muller",), 2020)
OWN = Paper("own:attn", "Attention Everywhere", ("Ashish Vaswani",), 2017, key="vaswani2017attention")
KEYLESS = Paper("own:attn2", "Attention Is All You Need", ("Ashish Vaswani", "Noam Shazeer"), 2017)


class Library:
    """A library of papers (the keys' view of it: its papers in order, a key's paper)."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = papers

    def iter_papers(self):
        return iter(self.papers)

    def by_key(self, key: str) -> Paper | None:
        return next((p for p in self.papers if p.key == key), None)


def test_a_key_of_the_paired_bib_in_another_case_is_never_given_again():
    keys = Keys(Library([]), {"Muller2020Ranking"})
    key = keys.key_of(MULLER)
    assert key.casefold() != "muller2020ranking" and key.startswith("muller2020ranking")
    # a key the run gave is reserved in any case too
    other = replace(MULLER, doc_id="lit:muller2")
    assert keys.key_of(other).casefold() not in {"muller2020ranking", key.casefold()}
    assert keys.key_of(MULLER) == key  # the same paper keeps its key


def test_the_card_shows_the_key_the_downloaded_bib_holds_when_the_base_key_is_taken():
    keys = Keys(Library([OWN, KEYLESS]))
    card = keys.key_of(KEYLESS)  # what rows.candidate_row shows (ui/cite/literature.key_of)
    assert card == "vaswani2017attentiona"  # vaswani2017attention is the other paper's
    slots = find_slots("Attention [CITATION].")
    result = SlotResult(slots[0], Query(slots[0].context), (Candidate(KEYLESS),),
                        Selection("found", KEYLESS, 0.9, "threshold"), ())
    bib, slot_keys = exports.bibliography([result], {0: KEYLESS.doc_id}, keys=keys)
    assert re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M) == [card] and slot_keys == {0: card}


def _with_literature() -> list[SlotResult]:
    slots = find_slots("Sparse ranking signals help [CITATION].")
    offered = (Candidate(MULLER, origin="lit").with_score("literature", 1, 0.7),)
    return [SlotResult(slots[0], Query(slots[0].context), (), Selection("not_found", None, 0.2, "threshold"), (),
                       literature=offered)]


def test_both_faces_write_one_results_shape_that_add_from_literature_reads_back():
    keys = Keys(Library([]), {"Muller2020Ranking"})
    shown = keys_to_be(_with_literature(), keys)
    cli_rows = result_rows(shown, {}, file_of=lambda r: "main.tex")  # fill --json
    page_rows = json.loads(exports.results_json(_with_literature(), {0: None}, {}, run_keys=keys))  # the page's
    assert set(cli_rows[0]) == set(page_rows[0])  # one shape
    for rows in (cli_rows, page_rows):
        rows = json.loads(json.dumps(rows))
        rows[0]["literature"][0]["add"] = True
        marked = picks_from_results(rows, "r.json")
        (candidate,) = marked.chosen[0]
        assert candidate.doc_id == MULLER.doc_id and marked.sentences == {0: "Sparse ranking signals help [CITATION]."}
        assert candidate.paper.key == keys.key_of(MULLER)  # the key it was shown under, given again when added
