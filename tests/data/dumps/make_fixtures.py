# ruff: noqa: E501 - records of data, one a line
"""Writes the dump fixtures of this folder (run it from the repository root: python tests/data/dumps/make_fixtures.py).

Records follow each format's documentation (arXiv's metadata snapshot as its Kaggle mirror describes it, the
OpenAlex work object and snapshot layout, the Semantic Scholar Datasets API's ``papers`` and ``abstracts``
records); titles and abstracts are written for the tests, not copied from the papers they name. Tricky cases
are listed in README.md; the tests (tests/test_dumps*.py) read the files, never this script.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def v(*dates: str) -> list[dict[str, str]]:
    return [{"version": f"v{i}", "created": d} for i, d in enumerate(dates, start=1)]


def arxiv(aid, title, abstract, categories, versions, authors_parsed, *, authors=None, doi=None, journal=None,
          update="2020-01-01", **extra):
    rec = {"id": aid, "submitter": authors_parsed[0][1] + " " + authors_parsed[0][0] if authors_parsed else None,
           "authors": authors if authors is not None else ", ".join(f"{p[1]} {p[0]}" for p in authors_parsed),
           "title": title, "comments": "10 pages", "journal-ref": journal, "doi": doi, "report-no": None,
           "categories": categories, "license": "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
           "abstract": abstract, "versions": versions, "update_date": update, "authors_parsed": authors_parsed}
    rec.update(extra)
    return rec


ARXIV = [
    arxiv("1706.03762", "Attention Is All You Need",
          "  The dominant sequence transduction models are recurrent. We propose the Transformer, based solely on\n"
          "attention mechanisms, dispensing with recurrence and convolutions entirely.\n", "cs.CL cs.LG",
          v("Mon, 12 Jun 2017 17:57:34 GMT", "Mon, 19 Jun 2017 16:49:45 GMT", "Wed, 6 Dec 2017 03:30:32 GMT"),
          [["Vaswani", "Ashish", ""], ["Shazeer", "Noam", ""], ["Parmar", "Niki", ""]], update="2023-08-03"),
    arxiv("hep-th/9901001", "Holographic renormalisation of a toy\n  gauge theory",
          "We study a toy gauge theory in the large $N$ limit and its holographic dual.", "hep-th",
          v("Fri, 1 Jan 1999 10:00:00 GMT"), [["Dual", "Ada", ""], ["Brane", "Boris", ""]], update="2009-10-07"),
    arxiv("math/0309136", "Knot invariants from quantum groups at roots of unity",
          "We construct invariants of knots in the three-sphere from quantum groups at roots of unity.",
          "math.GT math.QA", v("Tue, 9 Sep 2003 12:00:00 GMT"), [["Knotter", "Kim", ""]]),
    arxiv(704.0001, "Calculation of prompt diphoton production cross sections at Tevatron energies",
          "A fully differential calculation of diphoton production at hadron colliders is presented.", "hep-ph",
          v("Mon, 2 Apr 2007 19:18:42 GMT", "Tue, 24 Jul 2007 20:10:27 GMT"),
          [["Bal\\'azs", "C.", ""], ["Berger", "E. L.", ""], ["Yuan", "C. -P.", ""]],
          authors="C. Bal\\'azs, E. L. Berger, C.-P. Yuan",
          doi="10.1103/PhysRevD.76.013009 10.1000/second-doi", journal="Phys.Rev.D76:013009,2007"),
    arxiv(1501.0001, "Sparse coding with learned dictionaries for image denoising",
          "Dictionaries learned from noisy patches remove Gaussian noise from photographs.", "cs.CV eess.IV",
          v("Thu, 1 Jan 2015 09:00:00 GMT"), [["Patch", "Paula", ""]]),
    arxiv("1603.00002", "Query expansion without an abstract", None, "cs.IR",
          v("Tue, 1 Mar 2016 09:00:00 GMT"), [["Seeker", "Sam", ""]]),
    arxiv("1602.01234", "$\\ell_1$-regularized Schr\\\"odinger bridges for $k$-means clustering",
          "We relax $k$-means with an $\\ell_1$ penalty on the \\emph{Schr\\\"odinger} bridge between "
          "empirical measures; the relaxation is solved by entropic transport.", "stat.ML cs.LG math.OC",
          v("Thu, 4 Feb 2016 10:00:00 GMT"), [["Müller", "Jürgen", ""], ["Øksendal", "Bernt", ""], ["王", "小明", ""]],
          authors="J. M\\\"uller, B. {\\O}ksendal, X. Wang"),
    arxiv("1805.00003", "Citation recommendation from local context",
          "Given the sentence around a citation placeholder, we rank candidate papers by a neural scorer.",
          "cs.DL cs.IR", v("Tue, 1 May 2018 09:00:00 GMT"), [], authors="A. Smith and B. Jones"),
    arxiv("1905.00004", "Year from the identifier alone",
          "This record has no versions list; its year is read from its identifier.", "cs.AI", [],
          [["Clock", "Carla", ""]]),
    arxiv("2001.00005", "Versions listed out of order",
          "The second version is listed first; the year is the first version's.", "cs.LG",
          [{"version": "v2", "created": "Mon, 6 Jan 2021 09:00:00 GMT"},
           {"version": "v1", "created": "Wed, 1 Jan 2020 09:00:00 GMT"}], [["Order", "Otto", ""]]),
    arxiv("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          "We introduce a language representation model pre-trained on unlabeled text with a masked objective.",
          "cs.CL", v("Thu, 11 Oct 2018 00:50:01 GMT", "Fri, 24 May 2019 20:37:26 GMT"),
          [["Devlin", "Jacob", ""], ["Chang", "Ming-Wei", ""]], doi="10.18653/v1/N19-1423"),
    {"id": "1901.99999", "versions": v("Tue, 1 Jan 2019 09:00:00 GMT"), "categories": "cs.CL",
     "abstract": "A record without a title.", "authors_parsed": [["Nobody", "N.", ""]]},
    "{not json at all",
    ["a", "list", "not", "an", "object"],
    arxiv("not an id", "A record whose id is not an arXiv id", "Abstract.", "cs.CL", v("Tue, 1 Jan 2019 09:00:00 GMT"),
          [["Wrong", "Will", ""]]),
    arxiv(None, "A converted record without an arXiv id", "Converted from a conference list; it has no arXiv id.",
          "cs.CL", v("Sat, 1 Jan 2011 00:00:00 GMT"), [["Listed", "Lena", ""]]),
    arxiv("1706.03762", "Attention Is All You Need",
          "The same paper listed again (a mirror with one line per version).", "cs.CL cs.LG",
          v("Mon, 12 Jun 2017 17:57:34 GMT"), [["Vaswani", "Ashish", ""]]),
]
FILLER = [("1204.0101", "cs.CV", 2012, "Convolutional features for scene parsing", "scene parsing with convolutions"),
          ("1406.0102", "stat.ML", 2014, "Variational inference for topic models", "variational topic inference"),
          ("1507.0103", "cs.RO", 2015, "Legged robot locomotion on rough terrain", "quadruped gait control"),
          ("1611.0104", "cs.LG", 2016, "Dropout as a Bayesian approximation revisited", "dropout uncertainty"),
          ("1803.0105", "cs.AI", 2018, "Planning with learned world models", "model-based planning"),
          ("2006.0106", "q-bio.NC", 2020, "Spiking networks for place cells", "hippocampal place cell models"),
          ("2103.0107", "cs.CL", 2021, "Retrieval-augmented question answering", "retrieval for open-domain QA"),
          ("2202.0108", "econ.EM", 2022, "Instrumental variables with many weak instruments", "weak instruments"),
          ("1003.0109", "physics.optics", 2010, "Photonic crystal cavities with high quality factor", "nanocavities"),
          ("1909.0110", "cs.DL", 2019, "Measuring citation intent in scholarly text", "citation intent labels")]
for aid, cat, year, title, words in FILLER:
    ARXIV.append(arxiv(aid, title, f"We study {words}. Results on standard benchmarks are reported.", cat,
                       v(f"Mon, 1 Feb {year} 09:00:00 GMT"), [["Filler", "Fay", ""]]))


def inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, w in enumerate(text.split()):
        index.setdefault(w, []).append(i)
    return index


def topic(name, subfield, field, domain):
    return {"id": "https://openalex.org/T10028", "display_name": name, "score": 0.99,
            "subfield": {"id": "https://openalex.org/subfields/1702", "display_name": subfield},
            "field": {"id": "https://openalex.org/fields/17", "display_name": field},
            "domain": {"id": "https://openalex.org/domains/3", "display_name": domain}}


CS = topic("Natural Language Processing Techniques", "Artificial Intelligence", "Computer Science", "Physical Sciences")
MED = topic("Cardiac Imaging", "Cardiology and Cardiovascular Medicine", "Medicine", "Health Sciences")


def work(wid, title, *, year, authors=(), abstract=None, doi=None, locations=(), source=None, primary_topic=CS,
         concepts=(), wtype="article", ids=None, display_name=None, index=None, cited_by=3):
    primary = {"is_oa": True, "landing_page_url": locations[0] if locations else None, "pdf_url": None,
               "source": {"id": "https://openalex.org/S1", "display_name": source} if source else None}
    return {
        "id": f"https://openalex.org/{wid}", "doi": doi, "title": title,
        "display_name": display_name if display_name is not None else title, "publication_year": year,
        "publication_date": f"{year}-06-01" if year else None,
        "ids": ids or {"openalex": f"https://openalex.org/{wid}", **({"doi": doi} if doi else {})},
        "type": wtype, "authorships": [
            {"author_position": "first" if i == 0 else "middle",
             "author": {"id": f"https://openalex.org/A{i}", "display_name": a[0]}, "raw_author_name": a[1],
             "institutions": []} for i, a in enumerate(authors)],
        "primary_location": primary,
        "locations": [{"landing_page_url": u, "pdf_url": None, "source": None} for u in locations],
        "primary_topic": primary_topic, "concepts": list(concepts),
        "abstract_inverted_index": index if index is not None else (inverted(abstract) if abstract else None),
        "cited_by_count": cited_by, "updated_date": "2024-01-01T00:00:00",
    }


OPENALEX = [
    work("W2626778328", "Attention Is All You Need", year=2017,
         authors=[("Ashish Vaswani", "A. Vaswani"), ("Noam Shazeer", "N. Shazeer")],
         abstract="The dominant sequence transduction models are recurrent. We propose the Transformer.",
         locations=["http://arxiv.org/abs/1706.03762v5"], source="arXiv (Cornell University)", wtype="preprint",
         cited_by=120375),
    work("W2963341956", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
         year=2019, authors=[("Jacob Devlin", "Jacob Devlin")], doi="https://doi.org/10.18653/v1/n19-1423",
         abstract="We introduce a language representation model.", source="North American Chapter of the ACL",
         ids={"openalex": "https://openalex.org/W2963341956", "doi": "https://doi.org/10.18653/v1/n19-1423",
              "mag": 2963341956}),
    work("W3001", "Repeated words, punctuation and gaps", year=2021, authors=[("Zoë Ångström", "Z. Angstrom")],
         index={"The": [0, 7], "model,": [1], "which": [2], "is": [3], "small,": [4], "beats": [5], "(and": [6],
                "model)": [8], "baseline.": [10], "the": [9], "ignored": ["x", -1, True]}),
    work("W3002", "No abstract at all", year=2020, authors=[("Ning Abstract", None)]),
    work("W3003", None, display_name="Title only in display_name", year=2019,
         abstract="The work object has a null title and a display name.", authors=[(None, "Raw Name Only")]),
    work("W3004", None, display_name=None, year=2019, abstract="Neither title nor display name."),
    work("W3005", "Cardiac magnetic resonance in heart failure", year=2018, primary_topic=MED,
         authors=[("María José García-López", None)], abstract="Cardiac MRI quantifies ventricular function.",
         concepts=[{"display_name": "Medicine", "level": 0, "score": 0.9},
                   {"display_name": "Computer science", "level": 0, "score": 0.05}],
         ids={"openalex": "https://openalex.org/W3005", "pmid": "https://pubmed.ncbi.nlm.nih.gov/29912345"}),
    work("W3006", "An arXiv DOI names the preprint", year=2021, doi="https://doi.org/10.48550/arxiv.2101.00001",
         abstract="Preprints registered with DataCite carry an arXiv DOI."),
    work("W3007", "A chapter about transformers in $\\mathbb{R}^n$", year=2022, wtype="book-chapter",
         abstract="Chapter on attention with LaTeX like $\\alpha$ kept as written."),
    work("W3008", "Undated work", year=None, abstract="No publication year is known."),
    work("W3009", "Huge position index", year=2020, index={"first": [0], "last": [1000000]}),
]
for i, (title, year) in enumerate([("Graph neural networks for molecules", 2019), ("Contrastive image pretraining", 2021),
                                   ("Speech recognition with transducers", 2016), ("Federated learning at scale", 2020),
                                   ("Program synthesis from examples", 2015), ("Reinforcement learning for games", 2013)]):
    OPENALEX.append(work(f"W40{i}", title, year=year, authors=[("Filler Person", None)],
                         abstract=f"This work studies {title.lower()}."))


def s2paper(cid, title, *, year, authors=(), ext=None, fields=(), venue="", types=("JournalArticle",), **extra):
    ext = {"ACL": None, "DBLP": None, "ArXiv": None, "MAG": None, "CorpusId": str(cid), "PubMed": None, "DOI": None,
           "PubMedCentral": None, **(ext or {})}
    rec = {"corpusid": cid, "externalids": ext, "url": f"https://www.semanticscholar.org/paper/{cid:040d}",
           "title": title, "authors": [{"authorId": str(1000 + i), "name": a} for i, a in enumerate(authors)],
           "venue": venue, "publicationvenueid": None, "year": year, "referencecount": 10, "citationcount": 5,
           "influentialcitationcount": 1, "isopenaccess": False,
           "s2fieldsofstudy": [{"category": f, "source": "s2-fos-model"} for f in fields],
           "publicationtypes": list(types), "publicationdate": f"{year}-05-01" if year else None,
           "journal": {"name": venue or None, "pages": "1-10", "volume": "1"}}
    rec.update(extra)
    return rec


S2_PAPERS = [
    s2paper(13756489, "Attention is All you Need", year=2017, authors=["Ashish Vaswani", "Noam M. Shazeer"],
            ext={"ArXiv": "1706.03762", "DBLP": "conf/nips/VaswaniSPUJGKP17", "MAG": "2963403868"},
            fields=["Computer Science"], venue="Neural Information Processing Systems", types=["Conference"],
            citationcount=98512),
    s2paper(52967399, "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", year=2019,
            authors=["Jacob Devlin"], ext={"DOI": "10.18653/v1/N19-1423", "ACL": "N19-1423"},
            fields=["Computer Science"], venue="NAACL"),
    s2paper(100001, "Echocardiography screening in rural clinics", year=2015, authors=["Søren Kierkegaard-Hansen"],
            ext={"PubMed": "25551234"}, fields=["Medicine"]),
    s2paper(100002, "A paper the abstracts dataset does not cover", year=2018, authors=["Ann Without"],
            fields=["Computer Science"]),
    s2paper(100003, None, year=2018, authors=["No Title"], fields=["Computer Science"]),
    s2paper(100004, "Null external ids and year", year=None, ext=None, fields=[], externalids=None),
    s2paper(100005, "Spectral methods for $\\lambda$-calculus normalisation", year=2012, authors=["Alonzo Kirche"],
            fields=["Computer Science", "Mathematics"]),
]
for i, (title, year, fos) in enumerate([("Crop yield prediction from satellite images", 2020, "Agricultural and Food Sciences"),
                                        ("Neural machine translation for low-resource languages", 2019, "Computer Science"),
                                        ("Statins and cardiovascular outcomes", 2014, "Medicine"),
                                        ("Topological data analysis of point clouds", 2017, "Mathematics")]):
    S2_PAPERS.append(s2paper(200000 + i, title, year=year, authors=["Filler Author"], fields=[fos]))

S2_ABSTRACTS = [
    {"corpusid": 13756489, "abstract": "The dominant sequence transduction models are based on recurrent networks.",
     "openaccessinfo": {"externalids": {"ArXiv": "1706.03762"}, "license": None, "url": None, "status": None}},
    {"corpusid": 52967399, "abstract": "We introduce BERT, a masked language representation model.",
     "openaccessinfo": {"externalids": {}, "license": None, "url": None, "status": None}},
    {"corpusid": 100001, "abstract": "Handheld echocardiography screened villagers for rheumatic heart disease.",
     "openaccessinfo": None},
    {"corpusid": 100005, "abstract": "An old abstract, replaced by the later line for the same corpus id.",
     "openaccessinfo": None},
    {"corpusid": 100005, "abstract": "Eigenvalues of the reduction graph bound the normalisation of $\\lambda$-terms.",
     "openaccessinfo": None},
    {"corpusid": 999999, "abstract": "An abstract whose paper is not in the papers files.", "openaccessinfo": None},
]
for i in range(4):
    S2_ABSTRACTS.append({"corpusid": 200000 + i, "abstract": f"Filler abstract number {i} about {S2_PAPERS[7 + i]['title'].lower()}.",
                         "openaccessinfo": None})

S2_JOINED = [
    {"paperId": "649def34f8be52c8b66281af98ae884c09aef38b", "corpusId": 13756489,
     "externalIds": {"ArXiv": "1706.03762", "CorpusId": 13756489}, "title": "Attention is All you Need",
     "abstract": "Graph API record with its abstract inline.", "authors": [{"authorId": "40348417", "name": "Ashish Vaswani"}],
     "year": 2017, "venue": "NeurIPS", "fieldsOfStudy": ["Computer Science"], "citationCount": 98513},
    {"corpusid": 300001, "externalids": {"DOI": "10.1000/joined"}, "title": "An already joined dataset record",
     "abstract": "Joined offline: papers plus abstracts in one line.", "authors": [{"authorId": "1", "name": "J. Oined"}],
     "year": 2023, "s2fieldsofstudy": [{"category": "Computer Science", "source": "external"}]},
]


def write_lines(path: Path, records: list, *, gz: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records)
    if gz:
        with gzip.GzipFile(path, "wb", mtime=0) as f:  # mtime 0: the same bytes on every run
            f.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_lines(HERE / "arxiv-metadata-oai-snapshot.json", ARXIV)
    write_lines(HERE / "openalex" / "data" / "works" / "updated_date=2024-01-01" / "part_000.gz", OPENALEX, gz=True)
    write_lines(HERE / "s2" / "papers-part0.gz", S2_PAPERS, gz=True)
    write_lines(HERE / "s2" / "abstracts-part0.gz", S2_ABSTRACTS, gz=True)
    write_lines(HERE / "s2-joined.jsonl", S2_JOINED)
