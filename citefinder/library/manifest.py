"""``library.json``: what a library folder holds (embedder, collection, generation, expected counts).

Written atomically (a unique temporary file, fsync, rename) and only by the process holding the
folder's write lock (:mod:`citefinder.library.lockfile`); readers only read it.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MANIFEST = "library.json"


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
    """Replace the manifest atomically; two writers never share a temporary file."""
    path = Path(path)
    tmp = path / f"{MANIFEST}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with open(tmp, "w") as f:
            f.write(json.dumps(manifest, indent=2))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path / MANIFEST)
    finally:
        tmp.unlink(missing_ok=True)
