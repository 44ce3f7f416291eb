"""Following the CLI's own advice (issue 51, item 4): once the draft names ``new-references.bib``
(``\\bibliography{refs,new-references}``) and the user edited it by hand, a later ``--add-from-literature`` grows it,
every byte it held kept; a .bib CiteFinder never wrote is still never written, and one BibTeX cannot read is one clear
error. The rule lives in the one writer (:mod:`citefinder.text.safewrite`: a target that only grows)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from literature_support import import_dump

from citefinder.cli.main import main
from citefinder.errors import InputError
from citefinder.library.bibtex import grown_bib
from citefinder.text.safewrite import WritePlan

DATA = Path(__file__).parent / "data" / "add-paper"
COMPOSITIONAL = "t:67916608e556553c"  # Zheng 2021, Deep Compositional Metric Learning: only the literature's
DIVIDE = "t:42766a6aa9145408"  # Sanakoyeu 2019, Divide and Conquer the Embedding Space for Metric Learning
BY_HAND = "\n@misc{mine2024,\n  title = {An entry I added by hand},\n  author = {Me, Myself},\n  year = {2024}\n}\n"


def _written_once(path: Path, text: str) -> None:
    """``path`` as CiteFinder writes an output (its record beside it)."""
    plan = WritePlan(draft=path.with_name("paper.tex"))
    plan.target("--new-references", path, grow=True)
    plan.put(path, text.encode("utf-8"))
    plan.commit()


def test_a_named_and_hand_edited_bib_grows_byte_for_byte(tmp_path):
    new = tmp_path / "new-references.bib"
    _written_once(new, "@misc{a2021x,\n  title = {X},\n  year = {2021}\n}\n")
    edited = new.read_bytes().replace(b"{X}", b"{X, edited}") + BY_HAND.encode("utf-8")
    new.write_bytes(edited)
    plan = WritePlan(draft=tmp_path / "paper.tex")
    plan.protect("a .bib the draft names", [new])  # \bibliography{refs,new-references}
    plan.protect("a file linked to the library", [new])
    plan.target("--new-references", new, grow=True)
    held = plan.held(new)
    assert held.encode("utf-8") == edited
    text = grown_bib(held, new.name, "@misc{b2022y,\n  title = {Y},\n  year = {2022}\n}")
    with pytest.raises(ValueError, match="only grows"):
        plan.put(new, text.replace("edited", "lost").encode("utf-8"))
    plan.put(new, text.encode("utf-8"))
    plan.commit()
    assert new.read_bytes().startswith(edited) and new.read_text(encoding="utf-8").count("@misc") == 3
    assert (tmp_path / "new-references.bib.bak").read_bytes() == edited  # the user's edits kept as a backup too


def test_a_bib_citefinder_never_wrote_is_never_grown(tmp_path):
    refs = tmp_path / "refs.bib"
    refs.write_text("@misc{a, title={A}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="a .bib CiteFinder did not write"):
        WritePlan(draft=tmp_path / "paper.tex").target("--new-references", refs, grow=True)


def test_a_bib_the_draft_names_before_it_exists_is_made(tmp_path):
    new = tmp_path / "new-references.bib"
    plan = WritePlan(draft=tmp_path / "paper.tex")
    plan.protect("a .bib the draft names", [new])
    plan.target("--new-references", new, grow=True)
    assert plan.held(new) == ""
    plan.put(new, b"@misc{a, title={A}}\n")
    plan.commit()
    assert new.read_bytes() == b"@misc{a, title={A}}\n"


def test_a_bib_changed_while_citefinder_worked_is_not_written(tmp_path):
    new = tmp_path / "new-references.bib"
    _written_once(new, "@misc{a2021x, title = {X}}\n")
    plan = WritePlan(draft=tmp_path / "paper.tex")
    plan.target("--new-references", new, grow=True)
    plan.put(new, (plan.held(new) + "\n@misc{b, title = {B}}\n").encode("utf-8"))
    new.write_text("@misc{a2021x, title = {X}}\n@misc{c, title = {C}}\n", encoding="utf-8")
    with pytest.raises(InputError, match="changed while CiteFinder worked"):
        plan.commit()
    assert "@misc{b" not in new.read_text(encoding="utf-8")


def test_a_bib_bibtex_cannot_read_is_one_clear_error():
    with pytest.raises(InputError, match=r"new-references.bib is not a .bib BibTeX can read \(line 2\)"):
        grown_bib("@misc{a, title={A}}\n@misc{b, title = {unclosed\n", "new-references.bib", "@misc{c, title={C}}")
    assert grown_bib("", "x.bib", "@misc{c}") == "@misc{c}"
    assert grown_bib("@misc{a, title={A}}\n\n\n", "x.bib", "@misc{c}") == "@misc{a, title={A}}\n\n\n\n@misc{c}"


# --- end to end ---------------------------------------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("cli_literature_env")  # tests/literature_fixtures.py


@pytest.fixture(scope="module")
def literature(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("grow-lit") / "metric-lit"
    import_dump(folder, DATA / "literature.jsonl")
    return folder


def _keys(bib: Path) -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", bib.read_text(encoding="utf-8"), flags=re.M)


@pytest.mark.slow
def test_the_clis_advice_followed_grows_new_references(tmp_path, capsys, literature, monkeypatch):
    """Add a paper; name new-references.bib in \\bibliography as the CLI says and edit it by hand; add another paper:
    the file grows (the hand-edited bytes first), and the draft cites both. A file BibTeX cannot read is refused in
    one line, nothing written."""
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0.55")  # about the file, not the threshold
    shutil.copy(DATA / "refs-s2.bib", tmp_path / "refs.bib")
    tex = tmp_path / "paper.tex"
    body = ("\\documentclass{article}\n\\begin{document}\nComposing sub-embeddings gives deep compositional metric "
            "learning \\citep{?}.\nWe divide and conquer the embedding space for metric learning \\citep{?}.\n"
            "\\bibliography{%s}\n\\end{document}\n")
    tex.write_text(body % "refs", encoding="utf-8")
    common = ["fill", str(tex), "--literature", str(literature), "--literature-when", "always"]
    assert main([*common, "--json", str(tmp_path / "r.json")]) == 0
    rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    n = next(i for i, c in enumerate(rows[0]["literature"], 1) if c["paper"]["doc_id"] == COMPOSITIONAL)
    m = next(i for i, c in enumerate(rows[1]["literature"], 1) if c["paper"]["doc_id"] == DIVIDE)
    rows[1]["literature"][m - 1]["add"] = True
    (tmp_path / "second.json").write_text(json.dumps(rows), encoding="utf-8")
    assert main([*common, "--add-from-literature", f"1:{n}"]) == 0
    new = tmp_path / "new-references.bib"
    (first,) = _keys(new)
    assert "\\bibliography{refs,new-references}" in capsys.readouterr().out

    tex.write_text(body % "refs,new-references", encoding="utf-8")  # the advice followed
    edited = new.read_bytes().replace(b"year = {2021}", b"year = {2021},\n\tnote = {my note}") + BY_HAND.encode()
    new.write_bytes(edited)  # and the file edited by hand
    assert main(["fill", str(tex), "--add-from-literature", str(tmp_path / "second.json")]) == 0
    grown = new.read_bytes()
    assert grown.startswith(edited) and _keys(new)[:2] == [first, "mine2024"] and len(_keys(new)) == 3
    filled = (tmp_path / "paper.cited.tex").read_text(encoding="utf-8")
    assert f"\\citep{{{_keys(new)[2]}}}" in filled
    capsys.readouterr()

    broken = grown + b"\n@misc{oops, title = {never closed\n"
    new.write_bytes(broken)
    assert main(["fill", str(tex), "--add-from-literature", str(tmp_path / "second.json"), "--force"]) != 0
    assert "is not a .bib BibTeX can read" in capsys.readouterr().err
    assert new.read_bytes() == broken
