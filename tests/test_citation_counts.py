"""How often the literature cites a paper (issue 44): the dumps' counts kept on import (OpenAlex ``cited_by_count``,
Semantic Scholar ``citationcount``, a JSONL ``cited_by``), stored with the paper, and read by the literature tier's
prior: a landmark paper first among near-equals, never pulled up from far below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citefinder.config import Settings
from citefinder.library.formats.common import citation_count
from citefinder.library.readers import read_papers
from citefinder.library.readonly import ReadOnlyLibrary
from citefinder.library.records import from_record, to_metadata
from citefinder.library.store import Library
from citefinder.pipeline.cited import cited_counts
from citefinder.pipeline.priors import Priors, prior_order
from citefinder.types import Candidate, Paper

DUMPS = Path(__file__).resolve().parent / "data" / "dumps"
OPENALEX = DUMPS / "openalex" / "data" / "works" / "updated_date=2024-01-01" / "part_000.gz"


def _papers(path: Path) -> dict[str, Paper]:
    return {p.doc_id: p for p in read_papers(path) if isinstance(p, Paper)}


def test_the_dumps_keep_how_often_the_literature_cites_a_paper():
    works = _papers(OPENALEX)
    assert works["arxiv:1706.03762"].cited_by == 120375  # cited_by_count
    assert works["doi:10.18653/v1/n19-1423"].cited_by == 3
    s2 = _papers(DUMPS / "s2" / "papers-part0.gz")
    assert s2["arxiv:1706.03762"].cited_by == 98512  # citationcount
    assert s2["doi:10.18653/v1/n19-1423"].cited_by == 5
    graph = _papers(DUMPS / "s2-joined.jsonl")
    assert graph["arxiv:1706.03762"].cited_by == 98513  # the Graph API's citationCount


@pytest.mark.parametrize(("values", "expected"), [
    ((7,), 7), (("12",), 12), ((0,), 0), ((None, 4), 4), ((-1,), None), (("many",), None), ((True,), None),
    ((2.0,), 2), ((2.5,), None), ((), None)])
def test_a_count_is_a_whole_number_or_nothing(values, expected):
    assert citation_count(*values) == expected


def test_a_jsonl_count_is_read_and_a_missing_one_is_unknown_not_zero(tmp_path):
    path = tmp_path / "papers.jsonl"
    rows = [{"doc_id": "t:a", "title": "Counted by a dump", "cited_by_count": 41},
            {"doc_id": "t:b", "title": "Counted as S2 counts", "citationcount": "9"},
            {"doc_id": "t:c", "title": "Not counted"}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    papers = _papers(path)
    assert [papers[d].cited_by for d in ("t:a", "t:b", "t:c")] == [41, 9, None]


def test_the_count_is_stored_with_the_paper_queued_or_embedded(tmp_path):
    folder = tmp_path / "lit"
    Library.open(Settings(library=folder)).import_files([OPENALEX], defer_embedding=True)
    view = ReadOnlyLibrary.open(folder, Settings())
    assert view.get(["arxiv:1706.03762"])[0].cited_by == 120375  # the embedding queue (BM25-first)
    paper = Paper("t:x", "A stored paper", cited_by=17)
    assert from_record("t:x", to_metadata(paper, norm_title="a stored paper"), "").cited_by == 17  # Chroma's metadata
    assert from_record("t:y", to_metadata(Paper("t:y", "Uncounted"), norm_title="uncounted"), "").cited_by is None


def test_a_landmark_is_first_among_near_equals_never_pulled_up_from_far_below():
    feats = [{"shared": 0.0, "topic": 0.0, "newer": 0.0, "cited": float(n)} for n in (0, 2, 900, 0, 0, 0) + (0,) * 24
             + (5000,)]
    candidates = list(range(len(feats)))
    assert prior_order(candidates, feats, Priors(k=10.0))[:3] == [0, 1, 2]  # neutral: the literature's own order
    order = prior_order(candidates, feats, Priors(k=10.0, cited=1.0))
    assert order[0] == 2  # third, 900 citing sentences: first
    assert order.index(30) > 5  # 31st, the most cited of all: lifted, not to the top
    assert Priors(cited=0.5).neutral is False and Priors().neutral is True


def test_a_papers_own_count_comes_before_the_memorys(tmp_path):
    folder = tmp_path / "lit"
    Library.open(Settings(library=folder)).import_files([OPENALEX], defer_embedding=True)
    view = ReadOnlyLibrary.open(folder, Settings())
    counted, uncounted = view.get(["arxiv:1706.03762"])[0], Paper("t:none", "No count anywhere")
    found = cited_counts(view, [Candidate(counted), Candidate(uncounted)])
    assert found == {"arxiv:1706.03762": 120375}  # no memory here: the dump's count alone
