import gzip
import shutil
from pathlib import Path

import pypdf
import pytest

from citefinder.library.readers import read_papers
from citefinder.types import ImportFailure, Paper

DATA = Path(__file__).parent / "data"


def _split(items):
    items = list(items)
    papers = [p for p in items if isinstance(p, Paper)]
    failures = [f for f in items if isinstance(f, ImportFailure)]
    assert len(papers) + len(failures) == len(items)
    return papers, failures


# --- BibTeX -------------------------------------------------------------------------------------


def test_bib_reads_good_entries_and_reports_the_malformed_one():
    papers, failures = _split(read_papers(DATA / "refs.bib"))
    assert [p.doc_id for p in papers] == [
        "doi:10.18653/v1/n19-1423",
        "t:758be8848b7609b5",  # sha1 of "uber die suche nach zitaten in entwurfen|2020|a:muller" (title|year|author)
        "arxiv:1706.03762",
        "t:4308a59485d21b6e",  # title|year|first author hash
    ]
    assert all(p.source == "refs.bib" for p in papers)
    # the entry keys are kept as the papers' citation keys
    assert [p.key for p in papers] == ["devlin2019bert", "mueller2020", "vaswani2017attention", "neuripsstring2020"]
    assert [(f.source, f.reason) for f in failures] == [
        (
            "refs.bib:22",
            "malformed BibTeX entry 'broken2021' at line 22: Unexpected block start: `@misc`. "
            "Was still looking for field-value closing `}`",
        ),
        ("refs.bib:44", "entry 'notitle2018' has no title"),
    ]


def test_bib_fields_accents_and_authors():
    papers, _ = _split(read_papers(DATA / "refs.bib"))
    bert, mueller, attention, rag = papers
    assert bert.title == "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    assert bert.authors == ("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova")
    assert (bert.year, bert.venue, bert.doi, bert.entry_type) == (
        2019,
        "Proceedings of NAACL-HLT",
        "10.18653/v1/n19-1423",
        "inproceedings",
    )
    # A bare % is text in BibTeX, not a LaTeX comment.
    assert bert.abstract == (
        "We introduce a new language representation model called BERT. It improves the "
        "GLUE score to 80.5% (7.7% point absolute improvement)."
    )
    assert mueller.title == "Über die Suche nach Zitaten in Entwürfen"
    assert mueller.authors == ("Jörg Müller", "Ana García", "François Dupont")
    assert (mueller.venue, mueller.year, mueller.entry_type) == (
        "Journal of Citation Studies & Retrieval", 2020, "article")


def test_bib_arxiv_only_entry_and_string_macro():
    papers, _ = _split(read_papers(DATA / "refs.bib"))
    attention, rag = papers[2], papers[3]
    assert attention.arxiv_id == "1706.03762"
    assert attention.authors == ("Ashish Vaswani", "Noam Shazeer et al.")  # "and others": cut short (issue 51)
    assert (attention.year, attention.venue, attention.entry_type) == (2017, None, "misc")
    assert rag.venue == "Advances in Neural Information Processing Systems"
    assert rag.title == "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks"
    assert rag.url.endswith("6b493230205f780e1bc26945df7481e5-Abstract.html")


def test_bib_arxiv_id_from_journal_field(tmp_path):
    bib = tmp_path / "scholar.bib"
    bib.write_text(
        "@article{a, title={Deep Residual Learning}, author={He, Kaiming},"
        " journal={arXiv preprint arXiv:1512.03385}, year={2015}}\n"
    )
    (paper,) = read_papers(bib)
    assert (paper.arxiv_id, paper.doc_id) == ("1512.03385", "arxiv:1512.03385")


def test_bib_in_cp1252_is_decoded(tmp_path):
    bib = tmp_path / "latin.bib"
    bib.write_bytes("@article{k, title={Café Müller – a study}, author={Müller, Jörg}, year={1999}}\n".encode("cp1252"))
    (paper,) = read_papers(bib)
    assert paper.title == "Café Müller – a study"
    assert paper.authors == ("Jörg Müller",)


# --- JSON Lines ---------------------------------------------------------------------------------


def test_jsonl_streams_papers_and_reports_bad_lines_by_number():
    papers, failures = _split(read_papers(DATA / "papers.jsonl"))
    assert [p.doc_id for p in papers] == ["arxiv:0801.1063", "arxiv:0804.3575", "t:4f07b4e24172d969"]
    assert [(f.source, f.reason) for f in failures] == [
        ("papers.jsonl:3", "line 3 is not valid JSON (Expecting ',' delimiter at column 58)"),
        ("papers.jsonl:5", "line 5 has no title"),
        ("papers.jsonl:6", "line 6 is a JSON list, expected an object"),
    ]
    titov, pca, plain = papers
    assert titov.title == "Modeling Online Reviews with Multi-grain Topic Models"
    assert titov.authors == ("Ivan Titov", "Ryan McDonald")
    assert (titov.year, titov.venue, titov.arxiv_id, titov.source) == (2008, None, "0801.1063", "papers.jsonl")
    # No doc_id given: made from the (normalised) arXiv id; DOI normalised too.
    assert (pca.doc_id, pca.arxiv_id, pca.doi, pca.year) == (
        "arxiv:0804.3575", "0804.3575", "10.1109/focs.2008.48", 2008)
    assert (plain.url, plain.venue, plain.authors) == ("https://example.org/p", "Workshop on Tests", ())


def test_jsonl_gz_and_ndjson(tmp_path):
    raw = (DATA / "papers.jsonl").read_bytes()
    gz = tmp_path / "library.jsonl.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(raw)
    nd = tmp_path / "library.ndjson"
    nd.write_bytes(raw)
    plain = list(read_papers(DATA / "papers.jsonl"))
    for path in (gz, nd):
        items = list(read_papers(path))
        assert [getattr(i, "doc_id", None) for i in items] == [getattr(i, "doc_id", None) for i in plain]
        assert {i.source.split(":")[0] for i in items} == {path.name}


def test_truncated_gzip_keeps_what_was_read(tmp_path):
    gz = tmp_path / "cut.jsonl.gz"
    lines = [f'{{"title": "Paper number {i} about retrieval", "authors": ["A B"]}}\n' for i in range(2000)]
    data = gzip.compress("".join(lines).encode())
    gz.write_bytes(data[: len(data) // 2])
    items = list(read_papers(gz))
    assert isinstance(items[-1], ImportFailure) and items[-1].source == "cut.jsonl.gz"
    assert "could not read past line" in items[-1].reason
    assert items[0].title == "Paper number 0 about retrieval"
    assert all(isinstance(i, Paper) for i in items[:-1])


def test_jsonl_line_in_latin1(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        '{"title": "Naïve Bayes", "authors": ["José Pérez"]}\n'.encode("utf-8")
        + '{"title": "Über Bäume", "authors": ["Jörg"]}\n'.encode("cp1252")
    )
    papers, failures = _split(read_papers(path))
    assert failures == []
    assert [p.title for p in papers] == ["Naïve Bayes", "Über Bäume"]
    assert papers[0].authors == ("José Pérez",)


# --- CSL-JSON -----------------------------------------------------------------------------------


def test_csl_json_like_zotero():
    papers, failures = _split(read_papers(DATA / "zotero.json"))
    assert [(f.source, f.reason) for f in failures] == [
        ("zotero.json item 4", "item 4 (http://zotero.org/users/local/abc/items/DDDD4444) has no title")
    ]
    dpr, gpt3, colbert = papers
    assert dpr.title == "Dense Passage Retrieval for Open-Domain Question Answering"
    assert dpr.authors == ("Vladimir Karpukhin", "Barlas Oğuz", "Facebook AI Research")
    assert (dpr.year, dpr.venue, dpr.doi, dpr.url, dpr.entry_type) == (
        2020,
        "Transactions of the Association for Computational Linguistics",
        "10.1162/tacl_a_00001",
        "https://example.org/dpr",
        "article",
    )
    assert dpr.abstract == "Open-domain question answering relies on efficient passage retrieval."
    assert (gpt3.doc_id, gpt3.arxiv_id, gpt3.authors) == (
        "arxiv:2005.14165", "2005.14165", ("Tom B. Brown", "Benjamin Mann"))
    assert (colbert.year, colbert.entry_type) == (2020, "inproceedings")
    assert colbert.venue == "Proceedings of the 43rd International ACM SIGIR Conference"


def test_csl_json_object_with_items_and_bom(tmp_path):
    path = tmp_path / "export.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"items": [{"title": "One", "author": [{"literal": "ACME"}]}]}')
    (paper,) = read_papers(path)
    assert (paper.title, paper.authors, paper.source) == ("One", ("ACME",), "export.json")


def test_csl_json_invalid_json_is_one_failure(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"title": "x",\n  oops\n]')
    (failure,) = read_papers(path)
    assert failure.source == "bad.json:3"
    assert failure.reason.startswith("not valid JSON (Expecting property name enclosed in double quotes at line 3")


# --- PDF ----------------------------------------------------------------------------------------


def test_pdf_paper_title_authors_abstract_and_ids():
    (paper,) = read_papers(DATA / "paper.pdf")
    # The metadata title ("Microsoft Word - paper_final_v3.docx") is junk: the large lines win.
    assert paper.title == "Sparse Retrieval for Citation Recommendation in Scientific Drafts"
    assert paper.authors == ("Jörg Müller", "Ana López", "Wei Zhang")
    assert paper.abstract == (
        "We study how to find the papers behind citation markers in a draft. Our retrieval pipeline "
        "fuses BM25 and dense scores and improves recall by 12.5% on two benchmarks."
    )
    assert (paper.doi, paper.arxiv_id, paper.year) == ("10.1234/cite.2024.001", "2401.01234", 2024)
    assert (paper.doc_id, paper.source) == ("arxiv:2401.01234", "paper.pdf")


def test_pdf_sensible_metadata_title_is_used(tmp_path):
    writer = pypdf.PdfWriter(clone_from=DATA / "paper.pdf")
    writer.add_metadata({"/Title": "Sparse Retrieval for Citation Recommendation"})
    path = tmp_path / "meta.pdf"
    writer.write(path)
    (paper,) = read_papers(path)
    assert paper.title == "Sparse Retrieval for Citation Recommendation"
    assert paper.source == "meta.pdf"


def test_pdf_encrypted_corrupt_and_blank_are_failures(tmp_path):
    writer = pypdf.PdfWriter(clone_from=DATA / "paper.pdf")
    writer.encrypt("secret", algorithm="RC4-128")
    writer.write(tmp_path / "locked.pdf")
    (tmp_path / "cut.pdf").write_bytes((DATA / "paper.pdf").read_bytes()[:400])
    blank = pypdf.PdfWriter()
    blank.add_blank_page(612, 792)
    blank.write(tmp_path / "scan.pdf")

    (locked,) = read_papers(tmp_path / "locked.pdf")
    (cut,) = read_papers(tmp_path / "cut.pdf")
    (scan,) = read_papers(tmp_path / "scan.pdf")
    assert isinstance(locked, ImportFailure) and locked.source == "locked.pdf"
    assert "encrypted" in locked.reason and "remove the password" in locked.reason
    assert cut.source == "cut.pdf" and cut.reason.startswith("cut.pdf is not a readable PDF")
    assert scan.source == "scan.pdf" and "has no text layer" in scan.reason


# --- dispatch -----------------------------------------------------------------------------------


def test_unknown_suffix_names_supported_formats(tmp_path):
    path = tmp_path / "refs.docx"
    path.write_bytes(b"PK")
    (failure,) = read_papers(path)
    assert failure.source == "refs.docx"
    assert "unsupported file type" in failure.reason
    for fmt in (".bib", ".jsonl", ".json", ".pdf"):
        assert fmt in failure.reason


def test_suffix_is_case_insensitive_and_missing_file_is_a_failure(tmp_path):
    upper = tmp_path / "REFS.BIB"
    shutil.copy(DATA / "refs.bib", upper)
    assert sum(isinstance(p, Paper) for p in read_papers(upper)) == 4
    (missing,) = read_papers(tmp_path / "nope.bib")
    assert missing.source == "nope.bib" and missing.reason.startswith("file not found")


@pytest.mark.parametrize("name", ["refs.bib", "papers.jsonl", "zotero.json", "paper.pdf"])
def test_every_paper_has_source_and_doc_id(name):
    papers, _ = _split(read_papers(DATA / name))
    assert papers and all(p.source == name and p.doc_id and p.title for p in papers)


def test_bib_bare_ampersand_and_percent_are_text(tmp_path):
    bib = tmp_path / "bare.bib"
    bib.write_text("@article{k, title={Search & Rescue at 100% Recall}, journal={Stuff & Things}, year={2001}}\n")
    (paper,) = read_papers(bib)
    assert (paper.title, paper.venue) == ("Search & Rescue at 100% Recall", "Stuff & Things")


def test_bib_duplicate_key_is_kept_and_duplicate_field_is_reported(tmp_path):
    bib = tmp_path / "dups.bib"
    bib.write_text(
        "@article{same, title={First Paper}, year={2001}}\n"
        "@article{same, title={Second Paper}, year={2002}}\n"
        "@article{twice, title={A}, title={B}}\n"
    )
    papers, failures = _split(read_papers(bib))
    assert [p.title for p in papers] == ["First Paper", "Second Paper"]
    assert failures == [ImportFailure(
        "dups.bib:3", "malformed BibTeX entry 'twice' at line 3: field title is given more than once")]


def test_bib_venue_falls_back_to_howpublished_institution_publisher(tmp_path):
    f = tmp_path / "venues.bib"
    f.write_text(
        "@techreport{r, title={A Report}, author={Doe, Jane}, year={2001}, institution={Stanford InfoLab}}\n"
        "@book{b, title={A Book}, author={Roe, Rick}, year={2016}, publisher={MIT Press}}\n"
        "@misc{m, title={A Blog Post}, author={Poe, Pat}, year={2019}, howpublished={OpenAI blog}}\n",
        encoding="utf-8",
    )
    papers, failures = _split(read_papers(f))
    assert failures == []
    assert [p.venue for p in papers] == ["Stanford InfoLab", "MIT Press", "OpenAI blog"]
