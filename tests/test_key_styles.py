"""New keys in the user's style (issue 50, item 4) and unique ignoring case (issue 51, items 2-3): the ACL Anthology's
(``li-liang-2021-prefix``), DBLP's (``DBLP:conf/acl/LiL21``, ``DBLP:journals/corr/abs-2106-09685``) and Semantic
Scholar's (``Ke2017LightGBMAH``) keys are read as styles and written; a key never equals a taken one but for case,
and an author without Latin letters never gives a key of digits alone."""

from __future__ import annotations

import pytest

from citefinder.library.bibtex import bib_key_for, papers_to_bibtex, unique_key
from citefinder.library.keystyle import STYLES, dblp_key, key_in_style, read_style
from citefinder.types import Paper

PREFIX = Paper("a", "Prefix-Tuning: Optimizing Continuous Prompts for Generation", ("Xiang Lisa Li", "Percy Liang"),
               2021, "Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics")
BERT = Paper("b", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
             ("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"), 2019, "NAACL-HLT")
LORA = Paper("c", "LoRA: Low-Rank Adaptation of Large Language Models", ("Edward J. Hu", "Yelong Shen"), 2021,
             "arXiv preprint arXiv:2106.09685", arxiv_id="2106.09685")
LIGHTGBM = Paper("d", "LightGBM: A Highly Efficient Gradient Boosting Decision Tree", ("Guolin Ke", "Qi Meng"), 2017)
TSNE = Paper("e", "Visualizing Data using t-SNE", ("Laurens van der Maaten", "Geoffrey Hinton"), 2008,
             "Journal of Machine Learning Research")
NEW = Paper("n", "Parameter-Efficient Transfer Learning for NLP", ("Neil Houlsby", "Andrei Giurgiu", "Stanislaw "
            "Jastrzebski"), 2019, "International Conference on Machine Learning")
CJK = Paper("z", "深度学习", ("王小明",), 2021)


def _style(name: str):
    return next(s for s in STYLES if name in s.name)


def test_acl_anthology_keys_are_read_and_written():
    own = [Paper(p.doc_id, p.title, p.authors, p.year, p.venue, key=k)
           for p, k in ((PREFIX, "li-liang-2021-prefix"), (BERT, "devlin-etal-2019-bert"),
                        (TSNE, "van-der-maaten-hinton-2008-visualizing"))]
    fit = read_style(own)
    assert "ACL Anthology" in fit.style.name and fit.matched == 3
    assert key_in_style(NEW, fit.style, set()) == "houlsby-etal-2019-parameter"  # lastname-etal-YEAR-word
    # on a clash the Anthology writes more of the title, ignoring case
    assert key_in_style(PREFIX, fit.style, {"Li-Liang-2021-Prefix"}) == "li-liang-2021-prefix-tuning"
    cut = Paper("x", "GPT Understands, Too", ("Xiao Liu et al.",), 2021)
    assert key_in_style(cut, fit.style, set()) == "liu-etal-2021-gpt"  # a list cut short is "etal"


def test_dblp_keys_are_read_and_written():
    own = [Paper(p.doc_id, p.title, p.authors, p.year, p.venue, arxiv_id=p.arxiv_id, key=k)
           for p, k in ((PREFIX, "DBLP:conf/acl/LiL20"), (LORA, "DBLP:journals/corr/abs-2106-09685"),
                        (BERT, "DBLP:conf/naacl/DevlinCLT19"))]
    assert "DBLP" in read_style(own).style.name
    assert dblp_key(LORA) == "DBLP:journals/corr/abs-2106-09685"  # the key DBLP gives the arXiv version
    assert dblp_key(PREFIX) == "DBLP:conf/acl/LiL21"
    assert dblp_key(BERT) == "DBLP:conf/naacl/DevlinCLT19"
    assert dblp_key(TSNE) == "DBLP:journals/jmlr/MaatenH08"
    assert dblp_key(NEW) == "DBLP:conf/icml/HoulsbyGJ19"
    # a paper with no arXiv id at a venue DBLP's pattern does not name: DBLP's name part, never a made-up DBLP id
    assert dblp_key(Paper("w", "A workshop paper", ("Ann Smith", "Bo Jones"), 2020, "Some Workshop")) == "SmithJ20"
    style = _style("DBLP")
    assert key_in_style(PREFIX, style, {"dblp:conf/acl/lil21"}) == "DBLP:conf/acl/LiL21a"  # DBLP's own suffix


def test_semantic_scholar_keys_are_read():
    own = [Paper(LIGHTGBM.doc_id, LIGHTGBM.title, LIGHTGBM.authors, 2017, key="Ke2017LightGBMAH"),
           Paper(BERT.doc_id, BERT.title, BERT.authors, 2019, key="Devlin2019BERTPO")]
    fit = read_style(own)
    assert "Semantic Scholar" in fit.style.name and fit.matched == 2


@pytest.mark.parametrize("style", STYLES, ids=lambda s: s.name)
def test_no_style_writes_a_key_of_digits_alone_for_an_author_without_latin_letters(style):
    key = key_in_style(CJK, style, set())
    assert key and not key[:1].isdigit() and any(c.isalpha() and c.isascii() for c in key), key


def test_new_keys_are_unique_ignoring_case():
    paper = Paper("m", "Ranking with neural networks", ("Thomas Müller",), 2020)
    assert bib_key_for(paper) == "muller2020ranking"
    assert key_in_style(paper, STYLES[0], {"Muller2020Ranking"}) == "muller2020rankinga"
    assert key_in_style(paper, STYLES[0], lambda k: k.casefold() == "muller2020ranking") == "muller2020rankinga"
    assert unique_key("a2020x", ["A2020X", "a2020xA"]) == "a2020xb"
    # one export: a user's key and a generated one equal but for case are two keys BibTeX would take for one
    users = Paper("u", "Another ranking paper", ("Anna Müller",), 2020, key="Muller2020Ranking")
    _, keys = papers_to_bibtex([users, paper], taken={"MULLER2020RANKINGA"})
    assert keys == {"u": "Muller2020Ranking", "m": "muller2020rankingb"}
    twins = [Paper("p", "T", (), 2020, key="Smith2020"), Paper("q", "U", (), 2021, key="smith2020")]
    assert papers_to_bibtex(twins)[1] == {"p": "Smith2020", "q": "smith2020a"}
