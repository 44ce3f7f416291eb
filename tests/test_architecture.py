"""The architecture is checked on every test run: modules stay small, and the import-linter contracts in
pyproject.toml (layers, no cycles) are the ones the lint gate runs and they catch a new back-arrow."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400


def test_no_module_is_over_400_lines():
    grown = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "citefinder").rglob("*.py"))
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not grown, f"split by job (docs/ARCHITECTURE.md): modules over {MAX_LINES} lines: {grown}"


def lint_imports(package_root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())", "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=package_root, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(package_root), "PATH": "/usr/bin:/bin"})


def test_the_contracts_hold_and_a_back_arrow_breaks_them(tmp_path):
    kept = lint_imports(ROOT)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]
    assert "2 kept, 0 broken" in kept.stdout

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "citefinder", copy / "citefinder", ignore=shutil.ignore_patterns("__pycache__"))
    identity = copy / "citefinder" / "library" / "identity.py"
    identity.write_text(identity.read_text(encoding="utf-8") + "\nfrom citefinder.pipeline import pipeline  # noqa\n",
                        encoding="utf-8")
    broken = lint_imports(copy)
    assert broken.returncode != 0
    assert "citefinder.library.identity -> citefinder.pipeline.pipeline" in broken.stdout
