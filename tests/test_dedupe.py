import pytest

from citefinder.library.identity import (
    arxiv_id_from_doi,
    dedupe_keys,
    make_doc_id,
    normalize_arxiv_id,
    normalize_doi,
    normalize_title,
)
from citefinder.types import Paper


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{BERT}: Pre-training of {D}eep M{\\"u}ller', "bert pre training of deep muller"),
        ("Über   die Suche — nach Zitaten!", "uber die suche nach zitaten"),
        ("Fran{\\c{c}}ois and \\emph{Garc\\'{\\i}a}", "francois and garcia"),
        ("A  Title\nwith\tspaces_and_underscores", "a title with spaces and underscores"),
        ("", ""),
        (None, ""),
    ],
)
def test_normalize_title(raw, expected):
    assert normalize_title(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://doi.org/10.18653/V1/N19-1423", "10.18653/v1/n19-1423"),
        ("http://dx.doi.org/10.1000/ABC.1", "10.1000/abc.1"),
        ("doi:10.1000/xyz.", "10.1000/xyz"),
        ("DOI: 10.1000/xyz", "10.1000/xyz"),
        ("https://doi.org/10.1000%2Fxyz", "10.1000/xyz"),
        ("10.1/too-short-prefix", None),
        ("not a doi", None),
        ("", None),
        (None, None),
    ],
)
def test_normalize_doi(raw, expected):
    assert normalize_doi(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("arXiv:1706.03762v5", "1706.03762"),
        ("1706.03762", "1706.03762"),
        ("2401.01234v2", "2401.01234"),
        ("0801.1063", "0801.1063"),
        ("https://arxiv.org/abs/1810.04805v2", "1810.04805"),
        ("http://arxiv.org/pdf/1810.04805.pdf", "1810.04805"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("arXiv:hep-th/9901001v3", "hep-th/9901001"),
        ("math.GT/0309136", "math/0309136"),
        ("https://arxiv.org/abs/cond-mat/0102536v1", "cond-mat/0102536"),
        ("17060.3762", None),
        ("nonsense", None),
        (None, None),
    ],
)
def test_normalize_arxiv_id(raw, expected):
    assert normalize_arxiv_id(raw) == expected


def test_arxiv_id_from_arxiv_doi():
    assert arxiv_id_from_doi("10.48550/arXiv.2005.14165") == "2005.14165"
    assert arxiv_id_from_doi("10.1162/tacl_a_00001") is None


def test_dedupe_keys_strongest_first_and_only_present():
    full = Paper("x", "Attention Is All You Need!", doi="https://doi.org/10.5555/ABC", arxiv_id="arXiv:1706.03762v5")
    assert dedupe_keys(full) == ("doi:10.5555/abc", "arxiv:1706.03762", "title:attention is all you need")
    assert dedupe_keys(Paper("y", "Only a Title")) == ("title:only a title",)
    assert dedupe_keys(Paper("z", "", arxiv_id="bad id")) == ()


def test_make_doc_id_prefers_arxiv_then_doi_then_title_hash():
    assert make_doc_id(Paper("", "T", doi="10.5555/abc", arxiv_id="1706.03762v2")) == "arxiv:1706.03762"
    assert make_doc_id(Paper("", "T", doi="doi:10.5555/ABC")) == "doi:10.5555/abc"
    # sha1("attention is all you need")[:16]; punctuation and case do not change it.
    assert make_doc_id(Paper("", "Attention Is All You Need")) == "t:37f63852cdfb0690"
    assert make_doc_id(Paper("", "attention is all you need.")) == "t:37f63852cdfb0690"
    # with a year, the hash is of "title|year": same-titled works of different years differ
    assert make_doc_id(Paper("", "Attention Is All You Need", year=2017)) == "t:bed85d7e76ff7cd9"
    assert make_doc_id(Paper("", "Attention is all you need!", year=2017)) == "t:bed85d7e76ff7cd9"
