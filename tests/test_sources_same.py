"""The same-work decision every source's answers go through (citefinder.sources.same): DOI, then arXiv id,
then title + year + first author; two works one title could be are left alone; a wrong work is rejected."""

from __future__ import annotations

from collections.abc import Sequence

from citefinder.library.identity import make_doc_id, normalize_title
from citefinder.sources.base import Lookup, Source, SourceRecord
from citefinder.sources.same import find_same
from citefinder.types import Paper


def _paper(title: str, *, year: int | None = None, authors: tuple[str, ...] = (), doi: str | None = None,
           arxiv_id: str | None = None, abstract: str = "") -> Paper:
    p = Paper("", title, authors, year, doi=doi, arxiv_id=arxiv_id, abstract=abstract)
    return Paper(make_doc_id(p), title, authors, year, doi=doi, arxiv_id=arxiv_id, abstract=abstract)


class Shelf:
    """A source over a list of records: lookups answer every record sharing the asked key (as a search would,
    near misses included); it counts its calls."""

    name = "shelf"
    sends = ""

    def __init__(self, papers: Sequence[Paper]) -> None:
        self.papers = list(papers)
        self.calls: list[list[Lookup]] = []

    def lookup(self, queries: Sequence[Lookup]) -> list[list[SourceRecord]]:
        self.calls.append(list(queries))
        out = []
        for q in queries:
            if q.by == "doi":
                hits = [p for p in self.papers if p.doi and p.doi.lower() == q.value]
            elif q.by == "arxiv":
                hits = [p for p in self.papers if p.arxiv_id == q.value]
            else:  # a title search answers every paper sharing a word of the title
                words = set(normalize_title(q.value).split())
                hits = [p for p in self.papers if words & set(normalize_title(p.title).split())]
            out.append([SourceRecord(p, self.name, p.doc_id) for p in hits])
        return out

    def search(self, text: str, k: int) -> list[SourceRecord]:
        return []


LECUN = _paper("Deep learning", year=2015, authors=("Yann LeCun", "Yoshua Bengio"), abstract="Nature review.")
GOODFELLOW = _paper("Deep Learning", year=2016, authors=("Ian Goodfellow",), abstract="The book.")
ATTENTION = _paper("Attention is All you Need", year=2017, authors=("Ashish Vaswani",), arxiv_id="1706.03762",
                   abstract="The Transformer.")
ADAM = _paper("Adam: A Method for Stochastic Optimization", year=2015, authors=("Diederik P. Kingma",),
              doi="10.48550/arXiv.1412.6980", abstract="Adam.")


def test_a_source_is_the_protocol():
    assert isinstance(Shelf([]), Source)


def test_each_key_in_order_and_only_what_is_left_asked_again():
    shelf = Shelf([LECUN, GOODFELLOW, ATTENTION, ADAM])
    mine = [Paper("u1", "Adam", doi="https://doi.org/10.48550/ARXIV.1412.6980"),
            Paper("u2", "Attention is all you need", arxiv_id="arXiv:1706.03762v5"),
            Paper("u3", "{D}eep {L}earning", ("LeCun, Yann",), 2015)]
    matches = find_same(shelf, mine)
    assert [(m.via, m.found.paper.doc_id if m.found else None) for m in matches] == [
        ("doi", ADAM.doc_id), ("arxiv", ATTENTION.doc_id), ("title", LECUN.doc_id)]
    # the DOI question for the first only; the arXiv one for the second; the title for the third alone
    assert [[q.by for q in call] for call in shelf.calls] == [["doi"], ["arxiv"], ["title"]]


def test_a_title_two_works_share_is_left_alone():
    shelf = Shelf([LECUN, GOODFELLOW])
    [match] = find_same(shelf, [Paper("u", "Deep learning")])  # no year, no author: which one?
    assert match.found is None and len(match.ambiguous) == 2


def test_a_wrong_work_is_rejected():
    shelf = Shelf([GOODFELLOW, ATTENTION])
    [match] = find_same(shelf, [Paper("u", "Deep learning", ("Yann LeCun",), 2015)])
    assert match.found is None and not match.ambiguous  # the book is by another author, a year later
    [match] = find_same(shelf, [Paper("u", "Learning deep things", ("Ashish Vaswani",), 2017)])
    assert match.found is None and {r.paper.doc_id for r in match.rejected} == {GOODFELLOW.doc_id}


def test_one_work_in_two_records_is_found_with_its_abstract():
    preprint = _paper("Deep learning", year=2014, authors=("Yann LeCun",))
    shelf = Shelf([preprint, LECUN])
    [match] = find_same(shelf, [Paper("u", "Deep learning", ("Y. LeCun",), 2015)])
    assert match.found is not None and match.found.paper.abstract == "Nature review."


def test_an_id_whose_record_has_another_title_is_no_match_and_the_title_is_asked():
    # a .bib entry carrying another paper's arXiv id (drafts-dev's a3c: arXiv:1605.03835 is a decoding paper)
    decoding = _paper("Noisy Parallel Approximate Decoding for Conditional Recurrent Language Model", year=2016,
                      authors=("Kyunghyun Cho",), arxiv_id="1605.03835", abstract="Decoding.")
    a3c = _paper("Asynchronous Methods for Deep Reinforcement Learning", year=2016, authors=("Volodymyr Mnih",),
                 abstract="A3C.")
    retitled = _paper("Compact and Optimal Deep Learning with Recurrent Parameter Generators", year=2021,
                      authors=("Jiayun Wang",), arxiv_id="2107.07110", abstract="RPG.")
    shelf = Shelf([decoding, a3c, retitled])
    mine = [Paper("u1", "Asynchronous methods for deep reinforcement learning", ("Mnih, Volodymyr",), 2016,
                  arxiv_id="1605.03835"),
            Paper("u2", "Recurrent Parameter Generators", ("Wang, Jiayun",), 2021, arxiv_id="2107.07110")]
    first, second = find_same(shelf, mine)
    assert first.found is not None and first.found.paper.abstract == "A3C." and first.via == "title"
    assert second.found is not None and second.found.paper.abstract == "RPG." and second.via == "arxiv"


def test_another_version_by_the_same_first_author_a_few_years_apart():
    nips = _paper("Latent Dirichlet Allocation", year=2001, authors=("David M. Blei",), abstract="NIPS.")
    other = _paper("Latent Dirichlet Allocation", year=2002, authors=("Someone Else",), abstract="Other.")
    shelf = Shelf([nips, other])
    [jmlr] = find_same(shelf, [Paper("u", "Latent {D}irichlet allocation", ("Blei, David M.",), 2003)])
    assert jmlr.found is not None and jmlr.found.paper.abstract == "NIPS."
    [far] = find_same(shelf, [Paper("u", "Latent Dirichlet allocation", ("Blei, David M.",), 2008)])
    assert far.found is None  # five years apart: not taken for a version of it
    # a record of the entry's own years wins over another version
    journal = _paper("Latent Dirichlet Allocation", year=2003, authors=("D. Blei",), abstract="JMLR.")
    [own] = find_same(Shelf([nips, journal]), [Paper("u", "Latent Dirichlet allocation", ("Blei, David M.",), 2003)])
    assert own.found is not None and own.found.paper.abstract == "JMLR."


def test_a_first_author_written_with_et_al_is_read_as_that_author():
    raffel = _paper("Exploring the Limits of Transfer Learning", year=2019, authors=("Colin Raffel et al.",),
                    abstract="T5.")
    [match] = find_same(Shelf([raffel]), [Paper("u", "Exploring the limits of transfer learning",
                                                 ("Raffel, Colin", "Shazeer, Noam"), 2020)])
    assert match.found is not None and match.found.paper.abstract == "T5."


INTRO_REEF = _paper("Introduction", year=2016, doi="10.1007/s00338-016-1400-0", abstract="Coral reefs of the issue.")


def test_a_generic_title_is_never_taken_by_title():
    # issue 42: "Introduction" by Smith 2016 gained the abstract and DOI of an authorless 2016 "Introduction"
    [match] = find_same(Shelf([INTRO_REEF]), [Paper("u", "Introduction", ("Smith, John",), 2016)])
    assert match.found is None and [r.paper.doc_id for r in match.ambiguous] == [INTRO_REEF.doc_id]
    assert match.why == "a generic title"
    # even where both sides carry the same year and author
    smith = _paper("Introduction", year=2016, authors=("John Smith",), abstract="Another introduction.")
    [match] = find_same(Shelf([smith]), [Paper("u", "Introduction", ("Smith, John",), 2016)])
    assert match.found is None and match.ambiguous and match.why == "a generic title"
    # but a generic-looking entry with the record's DOI is the work the DOI names
    [match] = find_same(Shelf([INTRO_REEF]), [Paper("u", "Introduction", doi="10.1007/S00338-016-1400-0")])
    assert match.found is not None and match.via == "doi"


def test_a_title_the_literature_holds_once_is_still_not_enough_without_year_and_author():
    # issue 42: @misc{deeplearning, title={Deep Learning}} gained LeCun's abstract, the only "Deep Learning" held
    [match] = find_same(Shelf([LECUN]), [Paper("u", "Deep Learning")])
    assert match.found is None and [r.paper.doc_id for r in match.ambiguous] == [LECUN.doc_id]
    assert match.why == "the title alone: no year nor author on one side to confirm it (a short title)"
    # with the year and author that confirm it, it is LeCun's
    [match] = find_same(Shelf([LECUN]), [Paper("u", "Deep Learning", ("LeCun, Yann",), 2015)])
    assert match.found is not None and match.found.paper.doc_id == LECUN.doc_id


def test_a_missing_year_or_author_on_either_side_leaves_a_title_alone():
    record = _paper("Attention is All you Need", year=2017, authors=("Ashish Vaswani",), abstract="The Transformer.")
    no_author = _paper("Attention is All you Need", year=2017, abstract="An authorless record.")
    cases = [(record, Paper("u", "Attention is all you need", ("Vaswani, Ashish",)), "no year"),
             (record, Paper("u", "Attention is all you need", (), 2017), "no author"),
             (no_author, Paper("u", "Attention is all you need", ("Vaswani, Ashish",), 2017), "no author")]
    for theirs, mine, missing in cases:
        [match] = find_same(Shelf([theirs]), [mine])
        assert match.found is None and len(match.ambiguous) == 1, (mine, theirs)
        assert match.why == f"the title alone: {missing} on one side to confirm it"
    # a confirmed record wins over an unconfirmed one of the same title; the unconfirmed one is no candidate
    [match] = find_same(Shelf([no_author, record]), [Paper("u", "Attention is all you need", ("Vaswani, A.",), 2017)])
    assert match.found is not None and match.found.paper.doc_id == record.doc_id


def test_an_ambiguous_title_is_reported_with_its_reason():
    from citefinder.sources.enrich import Outcome

    line = Outcome("t:1", "smith2016intro", "ambiguous", candidates=("t:2: Introduction (2016, no author)",),
                   why="a generic title").line()
    assert line == "smith2016intro: ambiguous, left alone: t:2: Introduction (2016, no author) [a generic title]"


def test_library_enrich_leaves_another_works_fields_alone_and_lists_why(tmp_path, capsys, monkeypatch):
    """Issue 42 item 4 end to end: a literature library holding an authorless 2016 "Introduction" and only
    LeCun's "Deep learning"; ``library enrich --from`` it over the .bib that names both plainly."""
    import json
    import shutil
    from pathlib import Path

    from citefinder.cli.main import main
    from citefinder.config import Settings
    from citefinder.library.link import library_beside
    from citefinder.library.store import Library

    data = Path(__file__).parent / "data" / "enrich-safe"
    monkeypatch.setenv("CITEFINDER_CACHE", str(tmp_path / "cache"))
    literature = tmp_path / "lit"
    Library.open(Settings(library=literature)).import_files([data / "literature.jsonl"], defer_embedding=True)
    bib = tmp_path / "refs.bib"
    shutil.copy(data / "refs.bib", bib)
    report = tmp_path / "enrich.json"
    assert main(["library", "enrich", "--from", str(literature), "--bib", str(bib), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    assert "smith2016intro: ambiguous, left alone: doi:10.1007/s00338-016-1400-0: Introduction (2016, no author) " \
           "[a generic title]" in out
    assert "deeplearning: ambiguous, left alone: doi:10.1038/nature14539: Deep learning (2015, lecun) [the title " \
           "alone: no year nor author on one side to confirm it (a short title)]" in out
    assert "vaswani2017attention: gained abstract, arxiv from arxiv:1706.03762 (by title)" in out
    outcomes = {o["label"]: o for o in json.loads(report.read_text())["outcomes"]}
    assert outcomes["smith2016intro"]["status"] == "ambiguous" and outcomes["smith2016intro"]["why"]
    papers = {p.key: p for p in Library.open(Settings(library=library_beside(bib))).iter_papers()}
    assert papers["smith2016intro"].abstract == "" and papers["smith2016intro"].provenance == ()
    assert papers["deeplearning"].abstract == "" and papers["deeplearning"].ids == ()
    assert papers["vaswani2017attention"].abstract.startswith("The dominant sequence transduction")
