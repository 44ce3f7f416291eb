"""A key with URL characters that the .bib defines (issue 51, item 5): ``https://doi.org/10.48550/arxiv.2106.07704`` is
the key BibTeX reads, so the check finds its entry and never says "no entry of the .bib has that key (LaTeX prints
[?] there)". A CSL-JSON item's URL id is still no citation key (Zotero's item ids are not the user's keys)."""

from __future__ import annotations

from citefinder.check.bib import MISSING, bib_problems, citing_problems
from citefinder.check.draft import bib_entries
from citefinder.library.formats.common import clean_key
from citefinder.library.readers import read_papers
from citefinder.text.citations import find_citations
from citefinder.types import Paper

URL_KEY = "https://doi.org/10.48550/arxiv.2106.07704"
BIB = ("@misc{%s,\n  title = {Fine-tuning Large Language Models with Low-Rank Adaptation},\n  author = {Hu, Edward},\n"
       "  year = {2021}\n}\n\n@misc{DBLP:journals/corr/abs-2106-09685,\n  title = {LoRA},\n  author = {Hu, Edward},\n"
       "  year = {2021}\n}\n" % URL_KEY)
TEX = ("\\documentclass{article}\n\\begin{document}\nLow-rank adapters \\cite{%s} and LoRA "
       "\\citep{DBLP:journals/corr/abs-2106-09685}.\n\\bibliography{refs}\n\\end{document}\n" % URL_KEY)


def test_a_url_key_the_bib_defines_is_its_entry(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    assert [p.key for p in read_papers(bib) if isinstance(p, Paper)] == [URL_KEY, "DBLP:journals/corr/abs-2106-09685"]
    entries, notes = bib_entries([bib])
    assert notes == [] and URL_KEY in entries
    cited = [c.key for c in find_citations(TEX)]
    assert cited == [URL_KEY, "DBLP:journals/corr/abs-2106-09685"]
    assert not [p for p in citing_problems(list(entries), cited) if p.kind == MISSING]
    assert not [p for p in bib_problems(entries, cited, {}, {}) if p.kind == MISSING]


def test_a_csl_json_url_id_is_still_no_key():
    assert clean_key("http://zotero.org/users/1/items/ABCD1234") is None
