"""The "names" agent: the name written next to a marker, matched against the names papers introduce.

The names come from the names index (:mod:`citefinder.index.names` lists where each comes from and its weight:
a title's "X:" prefix, a name the abstract introduces, distinctive title tokens, acronyms, initials, the usual
names of landmark works), plus:

- with a citation-context memory, the names other authors and the user write next to the marker when
  they cite the paper ("VGG [CITATION]"; :mod:`citefinder.index.citednames`), up to 2 and 3, added.

Names are compared normalised (lower case, letters and digits only, a plural "s" dropped), so
"R-CNN", "RCNN" and "R-CNNs" meet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from citefinder.index.base import derived
from citefinder.index.citednames import CitedNamesKind
from citefinder.index.memory import memory_index
from citefinder.index.names import NAMES, NamesIndex, normalize_name
from citefinder.retrieve.base import hits_from_scores
from citefinder.retrieve.query.mentions import THIS, name_mentions
from citefinder.retrieve.query.naming import Mention, names_of, reading_of, relation, split_name
from citefinder.retrieve.query.reformulate import clean_focus
from citefinder.types import Hit, Query

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.library.store import Library

# A name shared by more papers than this says little about which one is cited ("CNN").
MAX_POSTINGS = 25


# A name match this strong (a known name, a title prefix, "we propose X") and clearly ahead of the next
# one was right 93% of the time on the training drafts (81/87); weaker or tied matches 14-65%. The two
# kinds are separate lists ("names" and "names-weak") so the fusion can trust the first much more.
STRONG = 2.5
CLEAR_LEAD = 0.7
# The n-th name from the marker counts 1 / n**DECAY: the name next to the marker is the cited thing far more often
# than one further away (bench/probes/names_variants.py at bc9259c, drafts-dev training part).
DECAY = 1.0


def _merged(own: tuple[tuple[str, float], ...], cited: tuple[tuple[str, float], ...]) -> list[tuple[str, float]]:
    """A paper's weight for a name: what its title/abstract say plus what the citing sentences say."""
    weights: dict[str, float] = {}
    for doc_id, weight in (*own, *cited):
        weights[doc_id] = weights.get(doc_id, 0.0) + weight
    return list(weights.items())


def _first_name(text: str) -> list[str]:
    """The name a citing sentence writes next to its [CITATION] marker (as the query side reads it)."""
    return list(name_mentions(clean_focus(text))[:1])


# The memory's names, read with the query side's own name finder (index/ cannot import it).
CITED_NAMES = CitedNamesKind(_first_name)


class NamesAgent:
    """Papers introducing a name written next to the marker; the nearest name counts most.

    ``strong=True`` ("names") keeps the strong matches clearly ahead of the rest; ``strong=False``
    ("names-weak") the others.
    """

    uses_variants = False

    def __init__(self, settings: "Settings", library: "Library", *, strong: bool = True) -> None:
        self.library = library
        self.k = settings.k_bm25
        self.strong = strong
        self.name = "names" if strong else "names-weak"

    def skip_reason(self, query: Query) -> str | None:
        return None if query.names else "no name next to the marker"

    def inputs(self, query: Query) -> dict[str, object]:
        return {"names": list(query.names)}

    def _lookups(self, query: Query, index: NamesIndex,
                 cited: NamesIndex | None) -> list[tuple[str, list[tuple[str, float]]]]:
        """Each name next to the marker with its postings (names as evidence, :mod:`citefinder.retrieve.query.naming`):
        a size mark looked up without it ("BERT-large" -> BERT); the base of a versioned name not looked up alone
        ("ShuffleNet V2" is not ShuffleNet); a surname of the library's authors read as a person ("Following Adam
        [") not looked up; a plural read as a library ("in Transformers [") only for papers whose own name it is."""
        out: list[tuple[str, list[tuple[str, float]]]] = []
        versioned: set[str] = set()
        for position, name in enumerate(query.names):
            base, size, version = split_name(name)
            if version:
                versioned.add(normalize_name(base))
            elif normalize_name(name) in versioned:
                continue
            reading = reading_of(f"{query.near} {THIS}", name, self._surnames(name)) if position == 0 else "work"
            if reading == "person":
                continue
            looked = name if not size else base + (f"-{version}" if version else "")
            postings = _merged(index.lookup(looked), cited.lookup(looked) if cited is not None else ())
            if reading == "library":
                mention = Mention(name, name, reading="library")
                ids = [d for d, _ in postings]
                own = {p.doc_id for p in self.library.get(ids) if relation(mention, names_of(p)) == "same"}
                postings = [(d, w) for d, w in postings if d in own]
            out.append((name, postings))
        return out

    def _surnames(self, name: str) -> frozenset[str]:
        """``name`` folded when an author of the library bears it as a surname (the person reading needs no more)."""
        from citefinder.index.authors import AUTHORS
        from citefinder.library.identity import fold

        folded = fold(name)
        return frozenset({folded}) if folded in derived(self.library, AUTHORS).postings else frozenset()

    def search(self, query: Query) -> list[Hit]:
        index: NamesIndex = derived(self.library, NAMES)
        cited, _ = memory_index(self.library, CITED_NAMES)  # how the memory names papers, when there is one
        scores: dict[str, float] = {}
        for position, (_name, postings) in enumerate(self._lookups(query, index, cited)):
            if not postings or len(postings) > MAX_POSTINGS:
                continue
            decay = 1.0 / (1.0 + position) ** DECAY
            specificity = 1.0 / len(postings) ** 0.5
            for doc_id, weight in postings:
                scores[doc_id] = scores.get(doc_id, 0.0) + weight * decay * specificity
        hits = hits_from_scores(scores, self.k)
        best = hits[0].score if hits else 0.0
        strong = {h.doc_id for h in hits if h.score >= STRONG and h.score >= CLEAR_LEAD * best}
        kept = [h for h in hits if (h.doc_id in strong) == self.strong]
        return [Hit(h.doc_id, r, h.score) for r, h in enumerate(kept, start=1)]
