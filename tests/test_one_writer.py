"""One way to write a file (issue 27): the modules that write the user's files and CiteFinder's own state for
them (fill, check, the Cite page's workspace, the .bib copies the Cite and Check pages keep, the library's link
state) write only through citefinder.text.safewrite; and each of those writes keeps a file's mode and is atomic."""

from __future__ import annotations

import argparse
import ast
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from citefinder.cli.main import build_parser, main
from citefinder.config import Settings
from citefinder.ui import paired_bib, workspace

ROOT = Path(__file__).resolve().parent.parent / "citefinder"
WRITERS = ["workflow/filling.py", "cli/check.py", "cli/outputs.py", "ui/workspace.py", "ui/paired_bib.py",
           "library/link.py",
           # issue 35: every other command's files, the settings, the records, manifests, cards and programs
           "cli/eval.py", "cli/optimize.py", "cli/reranker.py", "cli/embedder.py", "train/examples.py",
           "train/optimize.py", "train/cardfile.py", "train/rerank/train.py",
           "train/embedder/train.py", "ui/user_settings.py", "library/store/manifest.py", "text/written.py"]
PLANS = ("safewrite", "staging", "project_plan", "plan_output", "model_folder")  # the writer, or a plan made by it


def _direct_writes(path: Path) -> list[str]:
    """Calls that write a file without the safe writer: .write_text/.write_bytes, open(..., "w"/"wb"/"a")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("write_text", "write_bytes"):
            found.append(f"{path.name}:{node.lineno} .{func.attr}()")
        if isinstance(func, ast.Name) and func.id == "open" and len(node.args) > 1:
            mode = node.args[1]
            if isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wa"):
                found.append(f"{path.name}:{node.lineno} open(..., {mode.value!r})")
    return found


def test_the_writers_write_only_through_the_safe_writer():
    for name in WRITERS:
        path = ROOT / name
        assert not _direct_writes(path), _direct_writes(path)
        text = path.read_text(encoding="utf-8")
        assert any(p in text for p in PLANS), name  # the writer, or the plan cli/outputs makes


def test_the_cite_pages_writes_keep_the_mode_and_are_whole(tmp_path):
    # the workspace: a draft's file, rewritten, keeps the mode the user gave it
    draft = workspace.Draft("A [CITATION].", draft_id="d1")
    path = workspace.save_draft(tmp_path, draft)
    path.chmod(0o600)
    workspace.save_draft(tmp_path, workspace.Draft("A [CITATION]. B.", draft_id="d1"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(path.parent.glob(".*tmp"))  # no temporary file left behind
    # the .bib copy the Cite and Check pages keep
    saved = paired_bib.save_bib(Settings(library=tmp_path / "lib"), "refs.bib", b"@misc{a, title={A}}\n")
    assert saved.read_bytes() == b"@misc{a, title={A}}\n" and not list(saved.parent.glob(".*tmp"))


# --- issue 35: every command, every file ---------------------------------------------------------------------------
# Every option of the CLI that names a file or folder is in one of these two tables; an option that looks like an
# output (a Path named -o/--output/--out/--json/--markdown/--bib-out/--filled/--into, or whose help says "write")
# and is in neither fails the test below, so a new output cannot be added without being run against a project.

OUTPUT_NAMES = {"-o", "--output", "--out", "--json", "--markdown", "--bib-out", "--filled", "--into", "--libraries"}
FILE, FOLDER = "file", "folder"
# "command option" -> (what it writes, the command line with the target as {t})
OUTPUTS = {
    "fill -o": (FILE, ["fill", "{main}", "-o", "{t}"]),
    "fill --filled": (FILE, ["fill", "{main}", "--filled", "{t}"]),
    "fill --bib-out": (FILE, ["fill", "{main}", "--bib-out", "{t}"]),
    "fill --json": (FILE, ["fill", "{main}", "--json", "{t}"]),
    "check --json": (FILE, ["check", "{main}", "--json", "{t}"]),
    "check --markdown": (FILE, ["check", "{main}", "--markdown", "{t}"]),
    "check -o": (FILE, ["check", "{main}", "--fix", "Vaswani.Shazeer.ea.2017=Devlin.Chang.ea.2019", "-o", "{t}"]),
    "eval --out": (FILE, ["eval", "--dataset", "{dataset}", "--out", "{t}"]),
    "eval --libraries": (FOLDER, ["eval", "--drafts", "{drafts}", "--libraries", "{t}"]),
    "optimize -o": (FILE, ["optimize", "--examples", "{examples}", "-o", "{t}"]),
    "reranker examples-from-latex -o": (FILE, ["reranker", "examples-from-latex", "{main}", "{bib}", "-o", "{t}"]),
    "reranker train -o": (FOLDER, ["reranker", "train", "--examples", "{examples}", "-o", "{t}"]),
    "embedder train -o": (FOLDER, ["embedder", "train", "--contexts", "{pack}", "-o", "{t}"]),
    "embedder train --into": (FOLDER, ["embedder", "train", "--contexts", "{pack}", "--into", "{t}"]),
    "embedder use --into": (FOLDER, ["embedder", "use", "{model}", "--into", "{t}"]),
    "fill --new-references": (FILE, ["fill", "{main}", "--literature", "{folder}", "--add-from-literature", "1:1",
                                     "--new-references", "{t}"]),
    "library enrich --json": (FILE, ["library", "enrich", "--from", "{folder}", "--json", "{t}"]),
}
INPUTS = {  # read, never written
    "library import files", "library link files", "library unlink files", "fill draft", "fill --bib", "check draft",
    "check --bib", "check --against", "contexts import paths", "contexts import --bib", "eval --dataset",
    "eval --drafts", "eval --memory", "optimize --examples", "reranker train --examples", "reranker train --validation",
    "reranker examples-from-latex tex", "reranker examples-from-latex bib", "embedder train --contexts",
    "embedder train --papers", "contexts stats --bib", "contexts forget --bib", "contexts clear --bib",
    "library enrich --bib",
}
# each command's own input, which its output must never replace either
OWN_INPUT = {"eval --out": "dataset", "optimize -o": "examples", "reranker examples-from-latex -o": "main",
             "reranker train -o": "examples", "embedder train -o": "pack", "embedder train --into": "pack"}
PROTECTS_THE_DRAFT = ("fill", "check", "reranker examples-from-latex")  # the draft is its input: refused with --force


def _options() -> list[tuple[str, argparse.Action]]:
    def walk(parser: argparse.ArgumentParser, prefix: str):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, f"{prefix} {name}".strip())
            elif prefix:
                yield f"{prefix} {action.option_strings[0] if action.option_strings else action.dest}", action
    return list(walk(build_parser(), ""))


def _looks_like_output(key: str, action: argparse.Action) -> bool:
    names = set(action.option_strings) | {key.split()[-1]}
    return action.type is Path and (bool(names & OUTPUT_NAMES) or "write" in str(action.help or "").lower())


def test_every_option_naming_a_file_is_an_output_run_against_a_project_or_an_input():
    options = _options()
    unknown = [key for key, a in options if (a.type is Path or _looks_like_output(key, a))
               and key not in OUTPUTS and key not in INPUTS]
    assert not unknown, f"new file options: add each to OUTPUTS (and it is run below) or to INPUTS: {unknown}"
    looks = {key for key, a in options if _looks_like_output(key, a)}
    assert looks <= set(OUTPUTS), looks - set(OUTPUTS)  # an output-looking option is never filed as an input
    assert set(OUTPUTS) <= {key for key, _ in options}, set(OUTPUTS) - {key for key, _ in options}  # none stale


BIB = Path(__file__).parent / "data" / "latex" / "refs.bib"


def _inputs(root: Path) -> dict[str, Path]:
    """A small LaTeX project and every other input a command reads, inside ``root``."""
    p = {"project": root / "proj", "other": root / "other"}
    (p["project"] / "sections").mkdir(parents=True)
    p["other"].mkdir()
    p["main"] = p["project"] / "main.tex"
    p["main"].write_text("\\documentclass{article}\n\\begin{document}\nAttention \\cite{Vaswani.Shazeer.ea.2017}. "
                         "Dense [CITATION].\n\\input{sections/intro}\n\\bibliography{refs}\n\\end{document}\n")
    p["intro"] = p["project"] / "sections" / "intro.tex"
    p["intro"].write_text("Transformers \\citep{?}.\n")
    p["bib"] = p["project"] / "refs.bib"
    shutil.copy(BIB, p["bib"])
    p["other_bib"] = p["other"] / "mine.bib"
    p["other_bib"].write_text("@misc{mine, title={Mine}}\n")
    p["folder"] = root / "folder"
    p["folder"].mkdir()
    p["dataset"] = root / "q.jsonl"
    p["dataset"].write_text('{"id": "1", "text": "A [CITATION].", "gold": ["x"]}\n')
    p["examples"] = root / "ex.jsonl"
    p["examples"].write_text('{"id": "1", "text": "A [CITATION].", "gold": ["x"], "answerable": true}\n')
    p["pack"] = root / "pack.jsonl"
    p["pack"].write_text('{"context": "A [CITATION].", "cited": {"doc_id": "x"}}\n')
    p["drafts"] = root / "drafts"
    p["paper"] = p["drafts"] / "p1"
    p["paper"].mkdir(parents=True)
    for name in ("draft.txt", "refs-enriched.bib", "gold.jsonl"):
        (p["paper"] / name).write_text("x\n")
    p["model"] = root / "model"
    p["model"].mkdir()
    p["lib"] = root / "lib"
    (p["project"] / "main.tex").chmod(0o640)
    return p


def _state(root: Path) -> dict[str, tuple[bytes | str, int]]:
    out: dict[str, tuple[bytes | str, int]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (p.read_bytes() if p.is_file() else "dir", stat.S_IMODE(st.st_mode))
    return out


def _refused(capsys: Any, argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (argv, code, out, err)
    assert "Traceback" not in out + err
    return lines[0]


def _argv(template: list[str], p: dict[str, Path], target: Path, *extra: str) -> list[str]:
    return [a.format(t=target, **{k: str(v) for k, v in p.items()}) for a in template] + list(extra) + [
        "--library", str(p["lib"])]


@pytest.mark.parametrize("key", sorted(OUTPUTS))
def test_every_output_of_every_command_is_refused_over_the_files_of_a_project(tmp_path, capsys, key):
    p = _inputs(tmp_path)
    before = _state(tmp_path)
    kind, template = OUTPUTS[key]
    if kind == FILE:
        targets = ["main", "intro", "bib", "other_bib", "folder"] + ([OWN_INPUT[key]] if key in OWN_INPUT else [])
        if key == "eval --out":
            targets.append("drafts gold")
    elif key == "eval --libraries":
        targets = ["main", "bib", "drafts", "paper"]
    else:
        targets = ["main", "bib", "other_bib", "project", "lib"] + ([OWN_INPUT[key]] if key in OWN_INPUT else [])
    forced = f"{key.rsplit(' ', 1)[0]} --force" in {k for k, _ in _options()}  # run again with it, when it has one
    for name in targets:
        if name == "drafts gold":  # eval --drafts DIR --out DIR/paper/gold.jsonl: its own input
            argv = ["eval", "--drafts", str(p["drafts"]), "--out", str(p["paper"] / "gold.jsonl"),
                    "--library", str(p["lib"])]
        else:
            if name == "lib":
                p["lib"].mkdir()
                before = _state(tmp_path)
            argv = _argv(template, p, p[name])
        for extra in ([], ["--force"]) if forced else ([],):
            if extra and name in ("main", "intro") and not key.startswith(PROTECTS_THE_DRAFT):
                continue  # not this command's input: --force may replace it (with a .bak), as asked
            _refused(capsys, argv + extra)
            assert _state(tmp_path) == before, (key, name, extra)


def test_settings_are_written_whole_private_and_kept_when_the_write_fails(tmp_path, monkeypatch):
    import errno
    import os

    from citefinder.errors import InputError
    from citefinder.ui.user_settings import save_settings

    path = tmp_path / "cfg" / "settings.json"
    base = Settings(library=tmp_path / "lib")
    save_settings(base.with_overrides(k_bm25=77), base, path)
    first = path.read_bytes()
    assert b'"k_bm25": 77' in first and stat.S_IMODE(path.stat().st_mode) == 0o600

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(InputError, match="No space left on device; nothing was changed"):
        save_settings(base.with_overrides(k_bm25=88), base, path)
    assert path.read_bytes() == first and [p.name for p in path.parent.iterdir()] == ["settings.json"]


class _Upload:
    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def getvalue(self) -> bytes:
        return self.data


def test_uploaded_files_live_in_a_temporary_folder_removed_after_use():
    from citefinder.ui import contexts_panel, optimize_panel

    with contexts_panel._saved([_Upload("pack.jsonl", b"{}\n"), _Upload("../refs.bib", b"@misc{a}")]) as paths:
        assert [p.read_bytes() for p in paths] == [b"{}\n", b"@misc{a}"]
        assert [p.name for p in paths] == ["pack.jsonl", "refs.bib"]  # never a path out of the folder
        folder = paths[0].parent
    assert not folder.exists()
    try:
        with contexts_panel._saved([_Upload("pack.jsonl", b"{}\n")]) as paths:
            folder = paths[0].parent
            raise RuntimeError("the import failed")
    except RuntimeError:
        pass
    assert not folder.exists()  # removed when the import fails too
    with optimize_panel._examples_file(_Upload("ex.jsonl", b"{}\n")) as path:
        assert path is not None and path.read_bytes() == b"{}\n"
    assert not path.parent.exists()


# Every other call in the package that writes a file, and why it need not go through the one writer: each writes
# a temporary folder, a cache, or a library's own folder (its indexes built in a temporary folder renamed into
# place). A new direct write anywhere else fails the test: route it through citefinder.text.safewrite, or add it
# here with the reason.
INTERNAL = {
    "evaluate/drafts.py": "the .bib's hash inside the library folder eval made for it",
    "index/anchors.py": "a derived index, built in a temporary folder renamed into place (index/base.py)",
    "index/base.py": "derived indexes: a temporary folder renamed into place",
    "index/citations.py": "a derived index (index/base.py)", "index/cocitation.py": "a derived index (index/base.py)",
    "index/titles.py": "a derived index (index/base.py)", "index/vectors.py": "a derived index (index/base.py)",
    "index/static.py": "the static vectors' stamp of what was encoded, in a derived index's folder (index/base.py)",
    "library/store/bm25index.py": "the library's BM25 index: a temporary folder renamed into place",
    "library/store/core.py": "the library's BM25 index (library/store/bm25index.py)",
    "library/store/chroma.py": "a temporary copy of a read-only library's store",
    "library/contexts/api.py": "a new library's memory started from a template, under the library's write lock",
    "library/edit.py": "an entry's text in a temporary folder, read back as a .bib",
    "library/resume.py": "calls of its own save(), which writes dump-progress.json with safewrite.atomic_write",
    "library/store/pending.py": "a padded copy of a damaged queue in a temporary folder",
    "library/store/chroma_files.py": "a copy of a damaged chroma.sqlite3 in a temporary folder, read for salvage",
    "library/encoders/int8.py": "the quantized model in the cache: a temporary folder renamed into place",
    "library/encoders/shipped.py": "the shipped models rebuilt in the cache: a temporary folder renamed into place",
    "train/embedder/train.py": "a model saved into the folder staging.new_folder made (renamed over the output)",
    "train/optimize.py": "DSPy's save into a temporary folder (the program is written with atomic_write)",
    "ui/contexts_panel.py": "uploads in a temporary folder", "ui/evaluate_view.py": "uploads in a temporary folder",
    "ui/library_view.py": "uploads in a temporary folder", "ui/optimize_panel.py": "uploads in a temporary folder",
}
WRITE_CALLS = {"write_text", "write_bytes", "copyfile", "copy", "copy2", "copytree", "save", "savez", "dump"}


def _writes(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        mode = node.args[1] if name == "open" and len(node.args) > 1 else None
        if name in WRITE_CALLS and not (name == "copy" and not (isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Name) and func.value.id == "shutil")) or (
                isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax")):
            lines.append(node.lineno)
    return lines


def test_every_other_write_in_the_package_is_internal_and_says_why():
    found = {str(p.relative_to(ROOT)): _writes(p) for p in sorted(ROOT.rglob("*.py"))}
    found = {name: lines for name, lines in found.items() if lines and name != "text/staging.py"}  # the writer
    assert set(found) <= set(INTERNAL), {k: v for k, v in found.items() if k not in INTERNAL}
    assert not set(INTERNAL) - set(found), set(INTERNAL) - set(found)  # none stale


def test_eval_replaces_only_a_library_it_made_in_its_libraries_folder(tmp_path):
    from citefinder.errors import InputError
    from citefinder.evaluate.drafts import open_draft_library

    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title={A}}\n")
    mine = tmp_path / "libs" / "p1-refs"
    mine.mkdir(parents=True)
    (mine / "thesis.tex").write_text("mine")
    with pytest.raises(InputError, match="is not a library CiteFinder made"):
        open_draft_library(Settings(library=tmp_path / "lib"), bib, mine)
    assert (mine / "thesis.tex").read_text() == "mine"
