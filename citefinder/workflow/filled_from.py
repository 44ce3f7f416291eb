"""Which .bib file each key a fill cites comes from, said in the fill's last line.

A fill against the draft's own .bib files may also cite keys of ``new-references.bib`` (papers added from the
literature, in this run or before). LaTeX resolves those only if the draft names that file too, so the line says
which keys come from which file, and when a file the keys come from is not one the draft names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def key_files(slot_keys: Mapping[int, Sequence[str]], bibs: Sequence[Path], references: Path | None,
              held: Mapping[Path, set[str]] | None = None) -> dict[str, Path | None]:
    """Each cited key -> the file it comes from: the first of ``bibs`` (the draft's) that holds it, else
    ``references`` (new-references.bib), else None. ``held`` gives each file's keys (read from the files when
    not given)."""
    from citefinder.workflow.add_paper import bib_keys

    keys_of = dict(held) if held is not None else {b: bib_keys(b) for b in bibs}
    out: dict[str, Path | None] = {}
    for keys in slot_keys.values():
        for key in keys:
            out[key] = next((b for b in bibs if key in keys_of.get(b, set())), references)
    return out


def filled_from(slot_keys: Mapping[int, Sequence[str]], n_slots: int, bibs: Sequence[Path],
                references: Path | None, held: Mapping[Path, set[str]] | None = None) -> str:
    """The fill's summary: "3 of 4 slots filled with keys of refs.bib" when every key is of the draft's .bib files,
    else which keys come from which file, and the file the draft does not name (with what to add)."""
    head = f"{len(slot_keys)} of {n_slots} slots filled"
    where = key_files(slot_keys, bibs, references, held)
    named = {b.resolve() for b in bibs}
    others = sorted({p for p in where.values() if p is None or p.resolve() not in named}, key=str)
    if not others:
        return f"{head} with keys of {', '.join(str(b) for b in bibs)}"
    parts = []
    for file in [*(b for b in bibs if b in where.values()), *others]:
        keys = [k for k, p in where.items() if p == file]
        slots = sum(1 for ks in slot_keys.values() if any(k in keys for k in ks))
        said = f"{slots} slot{'s' if slots != 1 else ''}"
        if file is None:
            parts.append(f"{said} with keys of no .bib here ({', '.join(keys)})")
        elif file.resolve() in named:
            parts.append(f"{said} with keys of {file}")
        else:
            parts.append(f"{said} with keys of {file} ({', '.join(keys)}), which the draft does not name: add "
                         f"\\bibliography{{..., {file.stem}}} to cite them")
    return f"{head}: " + "; ".join(parts)
