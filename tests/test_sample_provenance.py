"""The sample is the shipped file's content, never a file name (issue 35, item 11): a user's own file named
``sample-library.bib`` (a copy of the sample they extend) gives papers of theirs, neither hidden from
suggestions nor removed with the sample; the shipped bytes under any name are the sample; a library made
before the papers were marked keeps its sample papers recognised (by their entry text), and they get the mark
with its next write. Real Chroma and bm25s (imports deferred where no vector is needed), MiniLM where embedded."""

from __future__ import annotations

import re
import shutil

import pytest

from citefinder.config import Settings
from citefinder.library import sample
from citefinder.library.formats.bib import read_bib
from citefinder.library.sample_file import MARKED, SAMPLE_ASSET, is_sample
from citefinder.library.store import Library
from citefinder.library.store.manifest import read_manifest, write_manifest
from citefinder.types import Paper

pytestmark = pytest.mark.slow

OWN = ("@article{prickle2021tunnels,\n  title = {Hedgehogs Tunnelling Under Frozen Meadows},\n"
       "  author = {Prickle, Ann},\n  journal = {Journal of Small Mammals},\n  year = {2021}\n}\n")
SHIPPED = SAMPLE_ASSET.read_text(encoding="utf-8")
N_SHIPPED = sum(isinstance(p, Paper) for p in read_bib(SAMPLE_ASSET))


def _entries(keys: tuple[str, ...]) -> str:
    found = [m.group(0) for m in re.finditer(r"@\w+\{(\w+),.*?\n\}\n", SHIPPED, flags=re.S) if m.group(1) in keys]
    assert len(found) == len(keys)
    return "\n".join(found)


def test_a_users_own_file_named_like_the_sample_is_theirs(tmp_path):
    own = tmp_path / "mine" / sample.SAMPLE_FILE  # three of the sample's entries, copied, and one of theirs
    own.parent.mkdir()
    own.write_text(_entries(("vaswani2017attention", "devlin2019bert", "raffel2020t5")) + "\n" + OWN)
    library = Library.open(Settings(library=tmp_path / "lib"))
    assert library.import_files([own], defer_embedding=True).added == 4
    assert sample.counts(library) == sample.Counts(4, 0)
    assert sample.hidden_ids(library) == frozenset()
    assert sample.remove_sample(library) == 0 and library.count() == 4


def test_the_shipped_bytes_are_the_sample_under_any_name_and_a_copy_extended_is_the_users(tmp_path):
    library = Library.open(Settings(library=tmp_path / "lib"))
    renamed = tmp_path / "landmarks.bib"
    shutil.copyfile(SAMPLE_ASSET, renamed)
    assert library.import_files([renamed], defer_embedding=True).added == N_SHIPPED
    assert sample.counts(library) == sample.Counts(0, N_SHIPPED)
    assert all(is_sample(p) and p.source == sample.SAMPLE_FILE for p in library.iter_papers())

    extended = tmp_path / "mine" / sample.SAMPLE_FILE
    extended.parent.mkdir()
    extended.write_text(SHIPPED + "\n" + OWN)
    report = library.import_files([extended], defer_embedding=True)
    assert (report.added, len(report.updated)) == (1, N_SHIPPED)  # each sample work became the user's
    assert sample.counts(library) == sample.Counts(N_SHIPPED + 1, 0)
    assert sample.remove_sample(library) == 0 and library.count() == N_SHIPPED + 1


def test_a_library_made_before_the_mark_keeps_its_sample_and_marks_it_on_the_next_write(tmp_path):
    folder = tmp_path / "lib"
    library = Library.open(Settings(library=folder))
    shipped = tmp_path / "shipped" / sample.SAMPLE_FILE  # as earlier versions stored the sample: unmarked
    shipped.parent.mkdir()
    shipped.write_text(_entries(("vaswani2017attention", "devlin2019bert")))
    own = tmp_path / "mine" / sample.SAMPLE_FILE  # and a file of the user's under the same name
    own.parent.mkdir()
    own.write_text(OWN)
    library.add_papers([p for f in (shipped, own) for p in read_bib(f)])
    manifest = read_manifest(folder)
    del manifest[MARKED]
    write_manifest(folder, manifest)

    old = Library.open(Settings(library=folder))
    mine = old.by_key("prickle2021tunnels")
    assert mine is not None and mine.source == sample.SAMPLE_FILE
    assert set(sample.sample_ids(old)) == {p.doc_id for p in old.iter_papers() if p.key != "prickle2021tunnels"}
    assert sample.counts(old) == sample.Counts(1, 2)

    other = tmp_path / "other.bib"
    other.write_text(OWN.replace("prickle2021tunnels", "quill2022").replace("Hedgehogs", "Porcupines"))
    old.import_files([other])  # the next write marks the sample's papers, once
    assert read_manifest(folder)[MARKED] is True
    marked = {p.key: is_sample(p) for p in Library.open(Settings(library=folder)).iter_papers()}
    assert marked == {"vaswani2017attention": True, "devlin2019bert": True, "prickle2021tunnels": False,
                      "quill2022": False}
    assert sample.remove_sample(old) == 2 and {p.key for p in old.iter_papers()} == {"prickle2021tunnels", "quill2022"}


def test_the_sample_mark_is_no_field_found_by_enrichment():
    from citefinder.library.sample_file import MARK
    from citefinder.sources.enrich import provenance_text
    from citefinder.types import Paper

    paper = Paper("t:1", "A", abstract="x", provenance=(MARK, ("abstract", "papers-333k", "arxiv:1")))
    assert provenance_text(paper) == "abstract from papers-333k, arxiv:1"
    assert provenance_text(Paper("t:2", "B", provenance=(MARK,))) == ""
