"""Write the chosen references back into the draft, in the draft's own cite commands.

A placeholder inside a cite command (``\\citep{?}``, ``\\autocite[p.~3]{TODO}``) is replaced by the
key and the command is kept; a plain marker (``[CITATION]``) becomes ``<command>{key}`` with the
command the user picked (default ``\\cite``); adjacent plain markers that are all filled become one
command with several keys. Everything else in the text is left byte for byte.
"""

from __future__ import annotations

import logging
import re
from typing import Mapping, Sequence

from citefinder.errors import InputError
from citefinder.text.slots import MARKER_RE, placeholder_keys
from citefinder.types import Slot

log = logging.getLogger(__name__)

DEFAULT_COMMAND = "\\cite"
_COMMAND = re.compile(r"^\\?([A-Za-z]+\*?)$")
_BETWEEN_MARKERS = re.compile(r"^\s*[,;]?\s*$")


def normalize_command(command: str | None) -> str:
    """``"citep"`` or ``"\\citep"`` -> ``"\\citep"``; InputError for anything that is not a command name."""
    m = _COMMAND.match((command or DEFAULT_COMMAND).strip())
    if not m:
        raise InputError(f"{command!r} is not a LaTeX cite command; use e.g. \\cite, \\citep or \\autocite.")
    return "\\" + m.group(1)


Keys = Mapping[int, "str | Sequence[str]"]


def keys_of(value: str | Sequence[str] | None) -> list[str]:
    """A slot's keys, in the order cited, each once: from one key, keys written ``"a,b"`` (a key never
    holds a comma) or a list."""
    if not value:
        return []
    keys = value.split(",") if isinstance(value, str) else [p for k in value if k for p in k.split(",")]
    return list(dict.fromkeys(k.strip() for k in keys if k.strip()))


def fill_draft(text: str, slots: Sequence[Slot], keys: Keys, *, command: str = DEFAULT_COMMAND) -> str:
    """``text`` with the marker of every slot in ``keys`` (slot.index -> bib key, or several keys: one
    slot citing several papers, ``\\cite{a,b}``) replaced; slots without a key are left as they are.

    A slot written with a cite command keeps it (``\\citet{?}`` -> ``\\citet{key}``; other keys and
    optional arguments of that command stay); a plain marker becomes ``command{key}``.

    Raises InputError when a slot's span no longer holds its marker (slots found in another text).
    """
    command = normalize_command(command)
    for slot in slots:
        if keys.get(slot.index) and text[slot.start : slot.end] != slot.marker:
            raise InputError(
                f"Slot {slot.index + 1} does not match the text at characters {slot.start}-{slot.end}; "
                f"the draft changed since the slots were found. Find the slots again."
            )
    groups: dict[tuple[int, int], list[Slot]] = {}
    for slot in sorted(slots, key=lambda s: s.index):
        groups.setdefault((slot.start, slot.end), []).append(slot)
    edits: list[tuple[int, int, str]] = []
    run: list[Slot] = []  # adjacent plain markers
    for span in sorted(groups):
        group = groups[span]
        if group[0].command or text[span[0] : span[1]] != group[0].marker:
            edits += _plain_run(run, keys, command)
            run = []
            if group[0].command:
                edit = _command_edit(text, group, keys)
                if edit:
                    edits.append(edit)
            continue
        if run and not _BETWEEN_MARKERS.match(text[run[-1].end : span[0]]):
            edits += _plain_run(run, keys, command)
            run = []
        run += group
    edits += _plain_run(run, keys, command)
    filled = text
    for start, end, replacement in sorted(edits, reverse=True):  # from the end: earlier spans stay valid
        filled = f"{filled[:start]}{replacement}{filled[end:]}"
    log.debug("filled %d of %d slots", sum(1 for s in slots if keys.get(s.index)), len(slots))
    return filled


def _plain_run(run: list[Slot], keys: Keys, command: str) -> list[tuple[int, int, str]]:
    """One ``command{a,b}`` over a run of adjacent markers all filled, else one command per filled marker."""
    if not run:
        return []
    if len(run) > 1 and all(keys.get(s.index) for s in run):
        joined = ",".join(dict.fromkeys(k for s in run for k in keys_of(keys[s.index])))
        return [(run[0].start, run[-1].end, f"{command}{{{joined}}}")]
    return [(s.start, s.end, f"{command}{{{','.join(keys_of(keys[s.index]))}}}") for s in run if keys.get(s.index)]


def _command_edit(text: str, group: list[Slot], keys: Keys) -> tuple[int, int, str] | None:
    """The cite command of ``group`` with its placeholders replaced by the slots' keys (in order)."""
    if not any(keys.get(s.index) for s in group):
        return None
    start, end = group[0].start, group[0].end
    m = MARKER_RE.fullmatch(text, start, end)
    if m is None or m.group("keys") is None:
        raise InputError(f"Slot {group[0].index + 1} is not a cite command any more; find the slots again.")
    items = m.group("keys").split(",")
    fills = dict(zip(placeholder_keys(m.group("keys")), (keys.get(s.index) for s in group), strict=False))
    out: list[str] = []
    seen: set[str] = {item.strip() for i, item in enumerate(items) if i not in fills}
    for i, item in enumerate(items):
        fill = [k for k in keys_of(fills.get(i)) if k not in seen]  # the same paper twice in one command: once
        if not fills.get(i):
            out.append(item)
        elif fill:
            seen.update(fill)
            lead = item[: len(item) - len(item.lstrip())]
            trail = item[len(item.rstrip()) :]
            out.append(f"{lead}{','.join(fill)}{trail}")
    body = ",".join(out)
    a, b = m.span("keys")
    return start, end, f"{text[start:a]}{body}{text[b:end]}"


def unfilled_report(slots: Sequence[Slot], keys: Keys, width: int = 100) -> list[str]:
    """One line per slot left unfilled: its number and the sentence it sits in (shortened)."""
    lines = []
    for slot in sorted(slots, key=lambda s: s.index):
        if keys.get(slot.index):
            continue
        sentence = slot.sentence
        if len(sentence) > width:
            sentence = sentence[: width - 3].rsplit(" ", 1)[0].rstrip() + "..."
        marker = " ".join(slot.marker.split())
        lines.append(f'Slot {slot.index + 1} left as {marker} (no reference chosen): "{sentence}"')
    return lines
