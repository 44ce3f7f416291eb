"""Compiled picker programs on disk: ``<library>/programs/picker-<UTC time>.json``.

``citefinder optimize`` writes them (DSPy's ``Module.save`` JSON plus a ``"citefinder"`` key
describing how it was made); the LLM selector loads the newest one. No dspy import here, so the
Settings page can list programs without loading DSPy.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from citefinder.errors import ConfigError

log = logging.getLogger(__name__)

PROGRAMS_DIR = "programs"
PREFIX = "picker-"


def programs_dir(library_path: str | Path) -> Path:
    """The folder holding a library's compiled programs (may not exist yet)."""
    return Path(library_path).expanduser() / PROGRAMS_DIR


def list_programs(library_path: str | Path) -> list[Path]:
    """The library's compiled programs, oldest first (names sort by their UTC timestamp)."""
    folder = programs_dir(library_path)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"{PREFIX}*.json") if p.is_file())


def active_program(library_path: str | Path) -> Path | None:
    """The newest compiled program of the library, or None when there is none."""
    programs = list_programs(library_path)
    return programs[-1] if programs else None


def new_program_path(library_path: str | Path, now: datetime | None = None) -> Path:
    """A fresh ``picker-YYYYmmdd-HHMMSS-ffffff.json`` path in the library's programs folder."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S-%f")
    return programs_dir(library_path) / f"{PREFIX}{stamp}.json"


def resolve_program(setting: str, library_path: str | Path) -> Path | None:
    """The program the ``llm_program`` setting names: 'auto' (newest), 'none', or a path."""
    value = setting.strip()
    if value.lower() in ("", "none", "off"):
        return None
    if value.lower() == "auto":
        return active_program(library_path)
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"llm_program {value!r} is not a file. Set CITEFINDER_LLM_PROGRAM to 'auto', 'none' or the path of a "
            "program .json written by `citefinder optimize`."
        )
    return path


def program_info(path: str | Path) -> dict[str, Any]:
    """What ``citefinder optimize`` recorded about a program (optimizer, model, examples, score...)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        log.warning("cannot read program %s: %s", path, e)
        return {}
    info = data.get("citefinder") if isinstance(data, dict) else None
    return dict(info) if isinstance(info, dict) else {}
