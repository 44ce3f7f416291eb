"""citefinder.workflow.enrich: the one call both faces make to complete entries, its typed result grouped
(completed / not found / ambiguous / nothing new) and where each completed field came from."""

from __future__ import annotations

from pathlib import Path

from citefinder.sources.enrich import EnrichReport, Outcome
from citefinder.types import Paper
from citefinder.workflow.enrich import Completion, FieldSource, field_source, provenance


def test_a_completion_groups_its_outcomes():
    outcomes = (Outcome("a", "vaswani2017", "enriched", ("abstract",), "arxiv:1706.03762", "title"),
                Outcome("b", "smith2016intro", "ambiguous", candidates=("t:1: Introduction (2016, no author)",),
                        why="a generic title"),
                Outcome("c", "unknown2020", "not found"),
                Outcome("d", "lstm", "nothing new", source_id="doi:10.1162/neco.1997.9.8.1735"))
    done = Completion("papers-lit", Path("lib"), EnrichReport("papers-lit", 9, outcomes))
    assert [o.label for o in done.completed] == ["vaswani2017"]
    assert [o.label for o in done.ambiguous] == ["smith2016intro"] and done.ambiguous[0].why == "a generic title"
    assert [o.label for o in done.not_found] == ["unknown2020"]
    assert [o.label for o in done.nothing_new] == ["lstm"]
    assert done.summary().startswith("papers-lit: 4 of 9 papers lacked an abstract or an id; 1 gained an abstract")


def test_where_each_completed_field_came_from():
    paper = Paper("p", "Deep Residual Learning", provenance=(("abstract", "papers-lit", "arxiv:1512.03385"),
                                                             ("arxiv", "papers-lit", "arxiv:1512.03385"),
                                                             ("record", "sample", "assets/sample-library.bib")))
    assert provenance(paper) == (FieldSource("abstract", "papers-lit", "arxiv:1512.03385"),
                                 FieldSource("arxiv", "papers-lit", "arxiv:1512.03385"))
    assert [f.text() for f in provenance(paper)] == ["abstract from papers-lit, arxiv:1512.03385",
                                                     "arXiv id from papers-lit, arxiv:1512.03385"]
    assert field_source(paper, "abstract") == FieldSource("abstract", "papers-lit", "arxiv:1512.03385")
    assert field_source(paper, "doi") is None and provenance(Paper("q", "Mine")) == ()
