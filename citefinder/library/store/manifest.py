"""``library.json``: what a library folder holds (embedder, collection, generation, expected counts).

Written atomically through the one writer (:func:`citefinder.text.safewrite.atomic_replace`) and only by the
process holding the folder's write lock (:mod:`citefinder.library.store.lockfile`); readers only read it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from citefinder.library.store.layout import MANIFEST

log = logging.getLogger(__name__)


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the library folder ``path``; {} when missing, and when damaged (logged)."""
    file = Path(path) / MANIFEST
    try:
        text = file.read_text()
    except FileNotFoundError:
        return {}
    except OSError as e:
        log.warning("cannot read %s: %s", file, e)
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        log.warning("%s is damaged (not JSON); it will be rewritten from what the store holds", file)
        return {}
    return dict(data) if isinstance(data, dict) else {}


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest atomically, through the one writer (a temporary file made exclusively, fsync,
    rename; two writers never share a temporary file)."""
    from citefinder.text.safewrite import atomic_replace

    atomic_replace(Path(path) / MANIFEST, json.dumps(manifest, indent=2).encode("utf-8"))
