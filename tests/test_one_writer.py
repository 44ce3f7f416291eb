"""One way to write a file (issue 27): the modules that write the user's files and CiteFinder's own state for
them (fill, check, the Cite page's workspace, the .bib copies the Cite and Check pages keep, the library's link
state) write only through citefinder.text.safewrite; and each of those writes keeps a file's mode and is atomic."""

from __future__ import annotations

import ast
import stat
from pathlib import Path

from citefinder.config import Settings
from citefinder.ui import paired_bib, workspace

ROOT = Path(__file__).resolve().parent.parent / "citefinder"
WRITERS = ["cli/fill.py", "cli/check.py", "cli/outputs.py", "ui/workspace.py", "ui/paired_bib.py", "library/link.py"]


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
        assert "safewrite" in text or "project_plan" in text, name  # the writer, or the plan cli/outputs makes


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
