"""No import circle in bench/ (issue 45): the scripts import one another (calibration_eval reads tune.py's rows, a
report reads saved outcomes), always one way. import-linter checks the package; this checks the scripts, which are not
a package."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _edges(sources: dict[str, str]) -> dict[str, set[str]]:
    """Script name -> the other scripts it imports (at any depth of its code: most import inside functions)."""
    edges: dict[str, set[str]] = {name: set() for name in sources}
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                targets = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module.split(".")[0]]
            else:
                continue
            edges[name] |= {t for t in targets if t in sources and t != name}
    return edges


def _circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as the path around it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(edges[name]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(edges):
        if name not in state and (found := visit(name)):
            return found
    return None


def test_no_import_circle_in_bench() -> None:
    sources = {p.stem: p.read_text(encoding="utf-8") for p in sorted(BENCH.rglob("*.py"))}
    assert {"tune", "drafts_eval", "check_eval", "common"} <= set(sources)  # the scripts were found
    circle = _circle(_edges(sources))
    assert circle is None, "bench scripts import one another in a circle: " + " -> ".join(circle or [])


def test_the_check_sees_a_circle() -> None:
    sources = {"a": "def f():\n    from b import g\n", "b": "import c\n", "c": "from a import f\n", "d": "import a\n"}
    assert _circle(_edges(sources)) == ["a", "b", "c", "a"]
    assert _circle(_edges({"a": "import b\n", "b": "import json\n"})) is None
