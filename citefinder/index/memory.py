"""What the indexes over the citation-context memory share: their stamp and the memory's state.

The memory (:mod:`citefinder.library.contexts`) changes apart from the papers (a pack imported, a
pick learned), so these indexes are stamped with both generations and rebuilt when either moves.
"""

from __future__ import annotations

from typing import Any

from citefinder.errors import LibraryDamagedError
from citefinder.library.contexts.memory import memory_of

NO_MEMORY = "no citation-context memory in this library (import one: `citefinder contexts import PACK`)"


def memory_stamp(library: Any) -> str:
    return f"{library.generation()}+m{memory_of(library).generation()}"


class MemoryIndexKind:
    """A derived index built from the library's citation-context memory: rebuilt when the library or the memory
    changes (:func:`memory_stamp`). Subclasses give ``name``, ``version`` and ``build``."""

    name = ""
    version = 1

    def stamp(self, library: Any) -> str:
        return memory_stamp(library)


def memory_missing(library: Any) -> str | None:
    """Why the memory cannot help any query ("none imported", "damaged: ..."), else None."""
    memory = memory_of(library)
    if not memory.exists():
        return NO_MEMORY
    try:
        memory.generation()
    except LibraryDamagedError as e:
        return str(e)
    return None


def memory_index(library: Any, kind: Any) -> tuple[Any, str | None]:
    """``(index, None)`` for an index over the memory that holds something, else ``(None, why not)``."""
    from citefinder.index.base import derived
    from citefinder.library.contexts.memory import memory_of

    missing = memory_missing(library)
    if missing:
        return None, missing
    try:
        index = derived(library, kind)
    except LibraryDamagedError as e:
        return None, str(e)
    if not len(index):
        held = memory_of(library).counts()["contexts"]
        return None, (f"no paper of this library is cited in its citation-context memory ({held:,} contexts held, "
                      "none matched)")
    return index, None
