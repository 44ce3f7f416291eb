"""Write the chosen references back into the draft, in the draft's own cite commands.

A placeholder inside a cite command (``\\citep{?}``, ``\\autocite[p.~3]{TODO}``) is replaced by the
key and the command is kept; a plain marker (``[CITATION]``) becomes ``<command>{key}`` with the
command the user picked (default ``\\cite``); adjacent plain markers that are all filled become one
command with several keys. Everything else in the text is left byte for byte.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

from citefinder.errors import InputError
from citefinder.text.latex import Key, parse_cite
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


SlotKeys = Mapping[int, "str | Sequence[str]"]


def keys_of(value: str | Sequence[str] | None) -> list[str]:
    """A slot's keys, in the order cited, each once: one key, keys written ``"a,b"`` (a key never holds a
    comma) or a list (the user picked several papers for one slot); blanks dropped."""
    if not value:
        return []
    items = value.split(",") if isinstance(value, str) else [p for k in value if k for p in k.split(",")]
    return list(dict.fromkeys(k.strip() for k in items if k.strip()))


def fill_draft(text: str, slots: Sequence[Slot], keys: SlotKeys, *, command: str = DEFAULT_COMMAND) -> str:
    """``text`` with the marker of every slot in ``keys`` (slot.index -> bib key, or a list of bib keys)
    replaced; slots without a key are left as they are.

    A slot written with a cite command keeps it (``\\citet{?}`` -> ``\\citet{key}``; other keys and
    optional arguments of that command stay, byte for byte, comments in its key list too); a plain
    marker becomes ``command{key}``; a slot given several keys gets them all (``\\cite{a,b}``).

    Raises InputError when a slot's span no longer holds its marker (slots found in another text).
    """
    command = normalize_command(command)
    filled_keys = {i: keys_of(v) for i, v in keys.items()}
    filled_keys = {i: v for i, v in filled_keys.items() if v}
    for slot in slots:
        if filled_keys.get(slot.index) and text[slot.start : slot.end] != slot.marker:
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
            edits += _plain_run(run, filled_keys, command)
            run = []
            if group[0].command:
                edits += _command_edits(text, group, filled_keys)
            continue
        if run and not _BETWEEN_MARKERS.match(text[run[-1].end : span[0]]):
            edits += _plain_run(run, filled_keys, command)
            run = []
        run += group
    edits += _plain_run(run, filled_keys, command)
    out, pos = [], 0
    for start, end, replacement in sorted(edits):
        out += [text[pos:start], replacement]
        pos = end
    out.append(text[pos:])
    log.debug("filled %d of %d slots", sum(1 for s in slots if filled_keys.get(s.index)), len(slots))
    return "".join(out)


def _plain_run(run: list[Slot], keys: dict[int, list[str]], command: str) -> list[tuple[int, int, str]]:
    """One ``command{a,b}`` over a run of adjacent markers all filled, else one command per filled marker."""
    if not run:
        return []
    if len(run) > 1 and all(keys.get(s.index) for s in run):
        joined = ",".join(dict.fromkeys(k for s in run for k in keys[s.index]))
        return [(run[0].start, run[-1].end, f"{command}{{{joined}}}")]
    return [(s.start, s.end, f"{command}{{{','.join(keys[s.index])}}}") for s in run if keys.get(s.index)]


def _command_edits(text: str, group: list[Slot], keys: dict[int, list[str]]) -> list[tuple[int, int, str]]:
    """Edits that write the slots' keys (in order) into the placeholders of their cite command; nothing
    else of the command changes. A key the command already holds is not written twice (its
    placeholder and the comma before it go)."""
    if not any(keys.get(s.index) for s in group):
        return []
    start, end = group[0].start, group[0].end
    cite = parse_cite(text, start, end)
    if cite is None or not cite.placeholders:
        raise InputError(f"Slot {group[0].index + 1} is not a cite command any more; find the slots again.")
    fills = dict(zip(cite.placeholders, (keys.get(s.index, []) for s in group), strict=False))
    seen = {k.text for i, k in enumerate(cite.keys) if i not in fills}
    edits: list[tuple[int, int, str]] = []
    kept = [i for i in range(len(cite.keys)) if i not in fills or fills[i]]  # placeholders left as they are stay
    for i, key in enumerate(cite.keys):
        new = [k for k in fills.get(i, []) if k not in seen]
        seen.update(new)
        if i not in fills or not fills[i]:
            continue
        if new:
            edits.append((key.start, key.end, ",".join(new)))
        else:  # every key it was given is cited already: the placeholder goes, with one comma
            edits += _drop_key(text, cite.keys, i, kept)
            kept.remove(i)
    return edits


def _drop_key(text: str, items: tuple[Key, ...], i: int, kept: list[int]) -> list[tuple[int, int, str]]:
    """Remove key ``i`` and the comma before it (after it, for the first key of the list); a comment
    between them stays."""
    key = items[i]
    if key.comma >= 0 and kept and kept[0] != i:
        if not text[key.comma + 1 : key.start].strip():
            return [(key.comma, key.end, "")]
        return [(key.comma, key.comma + 1, ""), (key.start, key.end, "")]
    following = next((items[j] for j in range(i + 1, len(items)) if j in kept), None)
    if following is not None and following.comma >= 0:
        return [(key.start, following.start, "")]
    return [(key.start, key.end, "")]


def unfilled_report(slots: Sequence[Slot], keys: SlotKeys, width: int = 100) -> list[str]:
    """One line per slot left unfilled: its number and the sentence it sits in (shortened)."""
    lines = []
    for slot in sorted(slots, key=lambda s: s.index):
        if keys_of(keys.get(slot.index)):
            continue
        sentence = slot.sentence
        if len(sentence) > width:
            sentence = sentence[: width - 3].rsplit(" ", 1)[0].rstrip() + "..."
        marker = " ".join(slot.marker.split())
        lines.append(f'Slot {slot.index + 1} left as {marker} (no reference chosen): "{sentence}"')
    return lines
