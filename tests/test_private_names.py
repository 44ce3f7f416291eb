"""No private name crosses a module (issue 45): a ``_name`` is used only in the module that defines it.

Two ways a private name crosses: ``from citefinder.x import _name``, and ``thing._name`` in a module that does not
define ``_name`` itself while another CiteFinder module does (a helper or method reached from outside). ``self`` and
``cls`` are the class's own business (the Library's mixins are one class), and private names of other packages
(bm25s, chromadb, arxiv) are theirs to keep: only names CiteFinder defines are checked.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "citefinder"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, assigned names and ``self._x = ...`` attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if _is_private(n)}


def _crossings(sources: dict[str, str]) -> list[str]:
    """Every private name a module takes from another, as ``module:line: what``."""
    trees = {mod: ast.parse(text) for mod, text in sources.items()}
    defined = {mod: _defined(tree) for mod, tree in trees.items()}
    where: dict[str, set[str]] = defaultdict(set)
    for mod, names in defined.items():
        for name in names:
            where[name].add(mod)
    found: list[str] = []
    for mod, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("citefinder"):
                for alias in node.names:
                    if _is_private(alias.name):
                        found.append(f"{mod}:{node.lineno}: from {node.module} import {alias.name}")
            elif isinstance(node, ast.Attribute) and _is_private(node.attr):
                owner = node.value.id if isinstance(node.value, ast.Name) else None
                if owner in ("self", "cls"):
                    continue
                if node.attr not in defined[mod] and where.get(node.attr):
                    found.append(f"{mod}:{node.lineno}: {ast.unparse(node)} (defined in "
                                 f"{', '.join(sorted(where[node.attr]))})")
    return found


def _package_sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE.parent)): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_private_name_crosses_a_module() -> None:
    found = _crossings(_package_sources())
    assert not found, "private names used outside their module (make them public or move them):\n" + "\n".join(found)


def test_the_check_catches_both_kinds_of_crossing() -> None:
    sources = {
        "citefinder/a.py": ("def _helper():\n    return 1\n\n"
                            "class Box:\n    def __init__(self):\n        self._inside = 2\n"),
        "citefinder/b.py": "from citefinder.a import _helper\n",
        "citefinder/c.py": "def use(box):\n    return box._inside\n",
        "citefinder/d.py": "def fine(box):\n    return box._private_of_someone_else + box.public\n",
    }
    found = _crossings(sources)
    assert any(f.startswith("citefinder/b.py:1: from citefinder.a import _helper") for f in found)
    assert any(f.startswith("citefinder/c.py:2: box._inside") for f in found)
    assert not any(f.startswith("citefinder/d.py") for f in found)
    assert len(found) == 2
