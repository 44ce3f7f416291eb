"""What the bench scripts share: the JSON report a run writes where ``--out`` asks for it, and the parser of a
script with subcommands.

A script run as ``python bench/NAME.py`` has ``bench/`` on its path and imports this as ``from common import ...``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def write_json(out: Path | None, data: Any, **dumps: Any) -> None:
    """``data`` as JSON (``dumps``: json.dumps's options) into the file ``out``, its folder made first; nothing
    when ``out`` is None (no ``--out`` given)."""
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, **dumps))


def emit(data: Any, out: Path | None, indent: int = 2) -> None:
    """A run's report printed as indented JSON and, where ``out`` is given, written to it the same way."""
    print(json.dumps(data, indent=indent))
    write_json(out, data, indent=indent)


def commands(doc: str | None) -> tuple[argparse.ArgumentParser, Any]:
    """A script's parser (its docstring ``doc`` as the help, kept as written) and its required subcommands, chosen
    as ``cmd``."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    return p, p.add_subparsers(dest="cmd", required=True)
