"""Settings a user chose in the app, kept per user on disk so they survive reloads and restarts.

The file is JSON at ``$CITEFINDER_USER_SETTINGS``, else ``$XDG_CONFIG_HOME/citefinder/settings.json``
(``~/.config/citefinder/settings.json``). It holds only the fields that differ from the
``CITEFINDER_*`` environment, and never a key or the contact address (``config.SECRET_FIELDS``): a key
typed in the app lasts for the browser session; to keep one, set ``CITEFINDER_LLM_API_KEY`` or
``OPENAI_API_KEY`` (``CITEFINDER_S2_API_KEY``, ``CITEFINDER_CONTACT_EMAIL``) in the environment.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from citefinder.config import SECRET_FIELDS, Settings
from citefinder.text.safewrite import atomic_write

log = logging.getLogger(__name__)

NEVER_SAVED = SECRET_FIELDS  # the API keys and the contact address: session only


def settings_path() -> Path:
    explicit = os.environ.get("CITEFINDER_USER_SETTINGS")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "citefinder" / "settings.json"


def saved_changes(path: Path | None = None) -> dict[str, Any]:
    """The saved fields (unknown or unreadable ones are dropped, with a log line)."""
    path = path or settings_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        log.warning("ignoring the user settings file %s: %s", path, e)
        return {}
    known = set(Settings.model_fields) - NEVER_SAVED
    return {k: v for k, v in data.items() if k in known} if isinstance(data, dict) else {}


def load_settings(base: Settings, path: Path | None = None) -> tuple[Settings, str | None]:
    """``base`` (from the environment) with the saved changes; an error line when they are invalid."""
    changes = saved_changes(path)
    if not changes:
        return base, None
    try:
        return base.with_overrides(**changes), None
    except ValidationError as e:
        return base, (f"Your saved settings ({path or settings_path()}) were not used: "
                      f"{e.error_count()} invalid value(s).")


def save_settings(settings: Settings, base: Settings, path: Path | None = None) -> Path:
    """Save the fields of ``settings`` that differ from ``base``, never the API key; returns the path."""
    path = path or settings_path()
    now, env = settings.model_dump(mode="json"), base.model_dump(mode="json")
    changes = {k: v for k, v in now.items() if k not in NEVER_SAVED and v != env.get(k)}
    path.parent.mkdir(parents=True, exist_ok=True)
    # whole or not at all (a crash mid-write never leaves half a file, read next time as no settings), 0600
    atomic_write(path, json.dumps(changes, indent=2, sort_keys=True).encode("utf-8"), mode=0o600)
    return path


def forget_settings(path: Path | None = None) -> None:
    (path or settings_path()).unlink(missing_ok=True)
