"""Names mean the named paper: a sentence that names a work cites the paper whose own name it is.

"... the next sentence prediction task in BERT [CITATION]" cites *BERT: Pre-training of Deep Bidirectional
Transformers*, not *Sentence-BERT* nor *ALBERT: A Lite BERT*, whose names merely contain "BERT"; "The
Transformer architecture [CITATION]" cites *Attention Is All You Need* (the name the literature gives it,
``citefinder/data/known_names.json``), not *BERT: ... Bidirectional Transformers* nor *Transformers:
State-of-the-Art NLP*. The words of a cousin match the sentence as well as the named paper's do (often better),
so the ranking alone swaps them; this module is the hard rule the selection applies after it:

- :func:`named_work` / :func:`named_mention`: the work a slot's sentence names right before its marker, read by the
  named-slot detector of :mod:`citefinder.retrieve.query.naming` (a size mark is the same work, a version mark a
  sequel, a surname of the library's authors after "Following" a person, a plural after "in" a library);
- :func:`own_names`: a paper's names (:func:`~citefinder.retrieve.query.naming.names_of`: known names, title head,
  acronyms, the names its abstract introduces);
- :func:`named_match` ``(focus, paper) -> NamedMatch``: "named" (:func:`~citefinder.retrieve.query.naming.relation`
  "same"), a cousin (a sequel or a variant, or its title mentions the name), "other", or "none" (no work named);
- :class:`Owners`: which papers of a library (the user's, or a literature library) own a name: its names index
  (:mod:`citefinder.index.names`) and its citation memory (:mod:`citefinder.index.citednames`);
- :func:`apply_named`: the rule. A named work is never auto-filled with a cousin nor with another paper while
  the library holds the named paper: the named paper is filled instead when it is among the candidates shown,
  else nothing is filled; the slot's card and trace say why (``details["named"]``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from citefinder.index.base import derived
from citefinder.index.names import NAMES, W_INTRODUCED, W_KNOWN, known_name_keys, normalize_name
from citefinder.retrieve.query import mentions, naming
from citefinder.retrieve.query.naming import Mention
from citefinder.types import Candidate, Paper, Selection, StageTrace

Kind = Literal["named", "cousin", "other", "none"]
MEMORY_SHARE = 1.0  # a name the memory's citing sentences give a paper at least half the time (weight 2 x share)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\+*")


@lru_cache(maxsize=1)
def tuned() -> dict[str, Any]:
    """The rule's measured constants (``citefinder/data/named.json``: split, figures, provenance)."""
    return dict(json.loads(resources.files("citefinder.data").joinpath("named.json").read_text(encoding="utf-8")))


def _key(name: str) -> str:
    return normalize_name(name)


def named_mention(focus: str, surnames: Collection[str] = ()) -> Mention | None:
    """The work the slot's sentence names at its marker (:func:`citefinder.retrieve.query.naming.mention_in`, the
    named-slot detector); ``surnames``: the library's authors' (a surname read as a person names no work)."""
    return naming.mention_in(focus, surnames=surnames)


def named_work(focus: str, surnames: Collection[str] = ()) -> str | None:
    """The name of the work (size dropped: "BERT-large" -> "BERT"; version kept: "GPT-2") a slot's sentence names
    right before its marker (``focus``: the sentence with this slot as [CITATION], others as [OTHER]), or None (no
    name, or a surname the sentence reads as a person)."""
    mention = named_mention(focus, surnames)
    return mention.name if mention is not None and mention.reading != "person" else None


def own_names(paper: Paper) -> frozenset[str]:
    """The normalised names ``paper`` goes by: known names, title head, title acronyms, names its abstract
    introduces (:func:`citefinder.retrieve.query.naming.names_of`)."""
    return naming.names_of(paper).keys


def title_words(paper: Paper) -> frozenset[str]:
    """The title's words normalised, a hyphenated word also by its parts ("Sentence-BERT" -> sentencebert,
    sentence, bert; "Transformers" -> transformer)."""
    out: set[str] = set()
    for token in _TOKEN.findall(paper.title or ""):
        out.add(_key(token))
        out.update(_key(part) for part in token.split("-") if part)
    return frozenset(k for k in out if len(k) >= 2)


def owns(paper: Paper, key: str, memory: frozenset[str] = frozenset()) -> bool:
    """Whether ``key`` (a normalised name) is ``paper``'s own name. A known name belongs only to the works it is
    known for ("the Transformer" is *Attention Is All You Need*, not *Transformers: State-of-the-Art NLP*);
    ``memory``: the doc_ids the citation memory names so."""
    if key in known_name_keys():
        return key in {_key(n) for n in naming.known_for(paper.title or "")}
    return key in own_names(paper) or paper.doc_id in memory


@dataclass(frozen=True)
class NamedMatch:
    """What a sentence's named work says of one paper. ``kind``: "named" (its own name), "cousin" (its own name
    contains the name, or its title mentions it, and it is not the named paper), "other" (neither), "none" (the
    sentence names no work); ``name``: the name as written; ``own``: the paper's own names; ``why``: in words."""

    kind: Kind
    name: str = ""
    own: tuple[str, ...] = ()
    why: str = ""
    by: str = ""  # for a cousin: "own name" (ALBERT contains BERT) or "title" (its title mentions the name)

    @property
    def named(self) -> bool:
        return self.kind == "named"

    @property
    def cousin(self) -> bool:
        return self.kind == "cousin"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def match_name(name: str | Mention | None, paper: Paper, memory: frozenset[str] = frozenset()) -> NamedMatch:
    """:func:`named_match` for a name (or a :class:`Mention`) already read from the sentence."""
    if not name:
        return NamedMatch("none")
    mention = name if isinstance(name, Mention) else Mention(name, *naming.split_name(name))
    if mention.reading == "person":
        return NamedMatch("none")
    name = mention.name if mention.reading == "work" else mention.written
    names = naming.names_of(paper)
    own = tuple(sorted(names.keys))
    title = (paper.title or "")[:80]
    rel = naming.relation(mention, names)
    if rel == "same" or (mention.reading == "work" and paper.doc_id in memory):
        return NamedMatch("named", name, own, f"{name} is the own name of {title}")
    if rel == "sequel":
        return NamedMatch("cousin", name, own, f"{title} is another version of {name}, not {name}'s own paper",
                          "own name")
    if rel == "variant":
        return NamedMatch("cousin", name, own, f"{title} is named after {name} but is not it", "own name")
    if mention.reading == "work" and mention.key in title_words(paper):
        return NamedMatch("cousin", name, own, f"{title} mentions {name} in its title but is not {name}'s own paper",
                          "title")
    return NamedMatch("other", name, own, f"{title} is not {name}'s own paper")


def named_match(focus: str, paper: Paper, memory: frozenset[str] = frozenset()) -> NamedMatch:
    """Whether ``paper`` is the work the sentence ``focus`` names (see :class:`NamedMatch`)."""
    mention = named_mention(focus)
    return match_name(mention, paper, memory)


class Owners:
    """The papers of a library that own a name (its own name, :func:`owns`): read from the library's names index
    (a known name's weight or a title head's) and, when it has one, its citation memory's names."""

    def __init__(self, library: Any, literature: Any = None) -> None:
        self.library = library
        self.literature = literature  # a literature library read in place: what it knows of names the user lacks

    def in_literature(self, name: str) -> bool:
        """Whether the literature (when set) holds a paper whose own name ``name`` is: the named work exists."""
        return self.literature is not None and bool(_owners_in(self.literature, _key(name)))

    def memory(self, key: str) -> frozenset[str]:
        """The doc_ids the citation memory names ``key`` (at least half of the sentences naming it so)."""
        from citefinder.index.memory import memory_index
        from citefinder.retrieve.agents.names import CITED_NAMES

        try:
            cited, _ = memory_index(self.library, CITED_NAMES)
        except Exception:  # noqa: BLE001 - a library without a memory (a literature view, a pool) has no names there
            return frozenset()
        if cited is None:
            return frozenset()
        return frozenset(d for d, w in cited.postings.get(key, ()) if w >= MEMORY_SHARE)

    def surnames(self) -> frozenset[str]:
        """The library's authors' surnames (folded): a bare one after "Following" is a person, not a work."""
        from citefinder.index.authors import AUTHORS

        try:
            return frozenset(derived(self.library, AUTHORS).postings)
        except Exception:  # noqa: BLE001 - a pool or a fake library without an authors index: no person reading
            return frozenset()

    def of(self, name: str | Mention) -> tuple[str, ...]:
        """The doc_ids whose own name ``name`` is, strongest first (for a name read as a library, the papers whose
        title head is the word as written: *Transformers: State-of-the-Art NLP* for "in Transformers")."""
        if isinstance(name, Mention) and name.reading == "library":
            ids = _owners_in(self.library, _key(name.written), W_INTRODUCED)
            return tuple(p.doc_id for p in self.library.get(list(ids))
                         if naming.relation(name, naming.names_of(p)) == "same")
        key = name.key if isinstance(name, Mention) else _key(name)
        found = list(_owners_in(self.library, key))
        if key not in known_name_keys():
            found += sorted(self.memory(key) - set(found))
        return tuple(dict.fromkeys(found))


def described(focus: str, name: str, paper: Paper) -> bool:
    """The words before the marker are the pick's own, so the sentence names it too: one of its own names written in
    the slot's part of the sentence ("RoBERTa-based models over BERT [CITATION]"), or two or three content words
    around the name that its title holds ("an OpenAI gym [CITATION]", "a fully connected CRF model [CITATION]")."""
    from citefinder.retrieve.query.reformulate import STOPWORDS, clean_focus

    parts, at = mentions.split_focus(clean_focus(focus))
    words = _TOKEN.findall(parts[at])
    written = {_key(w) for w in words} | {_key(x) for w in words for x in w.split("-") if x}
    if (own_names(paper) - {_key(name)}) & written:
        return True
    title = re.sub(r"[^a-z0-9]", "", (paper.title or "").lower())
    near = words[-4:]
    last = name.split()[-1]
    for k in (2, 3):
        for i in range(len(near) - k + 1):
            phrase = near[i:i + k]
            if last in phrase and all(w.lower() not in STOPWORDS for w in phrase):
                joined = re.sub(r"[^a-z0-9]", "", "".join(phrase).lower())
                if len(joined) >= 6 and joined in title:
                    return True
    return False


def _stands(focus: str, name: str, key: str, pick: NamedMatch, paper: Paper, found: Sequence[str],
            elsewhere: bool = False) -> bool:
    """Whether the rule overrules a pick that is not the named paper (RESULTS 43, 49): a cousin by its own name
    (ALBERT for BERT, a sequel) always; another pick when the name is a landmark's, the library holds the named paper
    (``found``) or the literature does (``elsewhere``); when nobody owns it, as ``named.json``'s "unowned" says.
    Never when the sentence's words are the pick's own (:func:`described`)."""
    if described(focus, name, paper):
        return False
    if pick.cousin and pick.by == "own name":
        return True
    if key in known_name_keys() or found or elsewhere:
        return True
    return bool(tuned().get("unowned", False))


def _weights(library: Any, mention: Mention) -> dict[str, float]:
    return dict(derived(library, NAMES).postings.get(mention.key if mention.reading == "work" else
                                                     _key(mention.written), ()))


def _owners_in(library: Any, key: str, floor: float | None = None) -> tuple[str, ...]:
    """The doc_ids of ``library`` whose names index gives ``key`` the weight of a known name (a known name) or of a
    title's head or a name its abstract introduces (another name), strongest first."""
    floor = floor if floor is not None else W_KNOWN if key in known_name_keys() else W_INTRODUCED
    postings = derived(library, NAMES).postings.get(key, ())
    return tuple(d for d, w in sorted(postings, key=lambda p: -p[1]) if w >= floor)


@dataclass(frozen=True)
class Decision:
    """What the rule did to one slot's selection: "kept", "filled" (the named paper instead), "withheld"."""

    action: str
    name: str
    selection: Selection
    candidates: tuple[Candidate, ...]
    why: str
    top: NamedMatch


def _first(candidates: Sequence[Candidate], ids: Sequence[str]) -> tuple[Candidate, ...] | None:
    """``candidates`` with the first of ``ids`` among the first ``promote_within`` moved first; None if none is."""
    within = list(candidates)[: int(tuned().get("promote_within", 10))]
    chosen = next((c for c in within if c.doc_id in set(ids)), None)
    if chosen is None:
        return None
    return (chosen, *(c for c in candidates if c.doc_id != chosen.doc_id))


def _person(mention: Mention, candidates: Sequence[Candidate], selection: Selection) -> Decision | None:
    """A surname read as a person ("Following Adam [CITATION]"): a pick named so (the Adam optimizer) that has no
    author of that name is not filled; a paper by that author among the candidates is put first."""
    from citefinder.library.identity import fold, surname

    who = fold(mention.written)
    by = [c.doc_id for c in candidates if any(surname(a) == who for a in c.paper.authors)]
    order = _first(candidates, by) or tuple(candidates)
    pick = selection.paper
    if pick is not None and pick.doc_id in by:
        return None
    if selection.status != "found" or pick is None or mention.key not in naming.names_of(pick).keys:
        return Decision("ordered", mention.written, selection, order, "", NamedMatch("none")) if by else None
    why = (f"the sentence reads {mention.written} as a person (an author of your library), not as "
           f"{pick.title[:80]!r}, which is named so: not filled")
    new = replace(selection, status="not_found", paper=None, also=(),
                  reasoning=f"{selection.reasoning}; {why}".lstrip("; "))
    return Decision("withheld", mention.written, new, order, why, NamedMatch("other", mention.written))


def decide(focus: str, candidates: Sequence[Candidate], selection: Selection, owners: Owners | None,
           threshold: float) -> Decision | None:
    """The rule for one slot (see the module doc); None when the sentence names no work. Nothing filled: the named
    paper put first among the candidates shown ("ordered") when it is there."""
    mention = named_mention(focus, owners.surnames() if owners is not None else ())
    if mention is None:
        return None
    if mention.reading == "person":
        return _person(mention, candidates, selection)
    name = mention.name if mention.reading == "work" else mention.written
    key = mention.key if mention.reading == "work" else _key(mention.written)
    found = owners.of(mention) if owners is not None else ()
    memory = owners.memory(key) if owners is not None and key not in known_name_keys() else frozenset()
    named = [c for c in candidates
             if c.doc_id in set(found) or (not found and match_name(mention, c.paper, memory).named)]
    if selection.status != "found" or selection.paper is None:
        if candidates and described(focus, name, candidates[0].paper):
            return None  # "RoBERTa-based models over BERT [": the first is the sentence's own too
        order = _first(candidates, [c.doc_id for c in named])
        return Decision("ordered", name, selection, order, "", NamedMatch("none")) if order else None
    pick = match_name(mention, selection.paper, memory)
    if pick.named:
        return Decision("kept", name, selection, tuple(candidates), pick.why, pick)
    shown = {c.doc_id: i for i, c in enumerate(candidates)}
    elsewhere = owners is not None and not found and owners.in_literature(name)
    if not _stands(focus, name, key, pick, selection.paper, found or tuple(c.doc_id for c in named), elsewhere):
        return Decision("kept", name, selection, tuple(candidates), pick.why, pick)
    if named and shown.get(named[0].doc_id, len(candidates)) < int(tuned().get("promote_within", 10)):
        chosen = named[0]
        conf = float(tuned().get("promoted_confidence", 0.0))
        why = (f"the sentence names {name}: {chosen.paper.title[:80]} is its own paper, {pick.why}; filled with the "
               f"named paper (named papers put first this way were right "
               f"{float(tuned().get('promoted_precision', 0.0)):.0%} of the time on training drafts)")
        new = replace(selection, paper=chosen.paper, also=(), confidence=conf,
                      reasoning=f"{selection.reasoning}; {why}".lstrip("; "))
        if conf < threshold:
            new = replace(new, status="not_found", paper=None)
        order = (chosen, *(c for c in candidates if c.doc_id != chosen.doc_id))
        return Decision("filled" if new.status == "found" else "withheld", name, new, order, why, pick)
    missing = "is not in your library" if not found else "is not among the candidates"
    why = f"the sentence names {name}: {pick.why}, and {name}'s own paper {missing}: not filled"
    new = replace(selection, status="not_found", paper=None, also=(),
                  reasoning=f"{selection.reasoning}; {why}".lstrip("; "))
    return Decision("withheld", name, new, tuple(candidates), why, pick)


def apply_named(focus: str, candidates: tuple[Candidate, ...], selection: Selection, trace: StageTrace,
                owners: Owners | None, threshold: float) -> tuple[Selection, StageTrace, tuple[Candidate, ...]]:
    """``selection`` (and its "select" trace and the candidates' order) once the rule has spoken: unchanged when the
    sentence names no work or the pick is the named paper; the named paper first (filled when the rule's measured
    confidence clears the threshold), or nothing filled; ``details["named"]`` says which and why."""
    decision = decide(focus, candidates, selection, owners, threshold)
    if decision is None:
        return selection, trace, candidates
    if decision.action == "ordered":  # nothing filled: the named paper first among those shown
        first: dict[str, Any] = {"name": decision.name, "action": "ordered", "first": decision.candidates[0].doc_id}
        return selection, replace(trace, details={**trace.details, "named": first}), decision.candidates
    note = {"name": decision.name, "action": decision.action, "why": decision.why, "pick": decision.top.kind,
            "before": selection.paper.doc_id if selection.paper else None,
            "selected": decision.selection.paper.doc_id if decision.selection.paper else None}
    details = {**trace.details, "named": note, "selected": note["selected"]}
    message = trace.message if decision.action == "kept" else f"{trace.message}; {decision.why}"
    return decision.selection, replace(trace, details=details, message=message), decision.candidates


def named_why(trace: StageTrace | None) -> str | None:
    """Why the name rule changed a slot's pick (for its card), or None."""
    note = trace.details.get("named") if trace is not None else None
    if isinstance(note, dict) and note.get("action") in ("filled", "withheld"):
        return str(note.get("why") or "")
    return None


LITERATURE_OWNERS = 3  # the named work's own papers a literature library adds when its ranking missed them


def named_first(focus: str, candidates: Sequence[Candidate], library: Any = None,
                holds: Callable[[Paper], bool] | None = None, limit: int = LITERATURE_OWNERS) -> list[Candidate]:
    """``candidates`` (a slot's literature, best first) with the named work's own papers first: those among them,
    then up to ``limit`` more that ``library`` (a literature library read in place) owns under the name and its
    ranking missed ("the Transformer" -> *Attention Is All You Need*, not five papers with Transformer in their
    titles). ``holds``: the user's library holds the paper (not offered as new). Unchanged when the sentence names
    no work."""
    mention = named_mention(focus)
    if mention is None or mention.reading == "person":
        return list(candidates)
    found = Owners(library).of(mention) if library is not None else ()
    strength = _weights(library, mention) if library is not None else {}  # the strongest owner first, ties ranked
    first = [c for c in candidates if c.doc_id in set(found) or match_name(mention, c.paper).named]
    have = {c.doc_id for c in candidates}
    missing = [d for d in found if d not in have][:limit]
    if missing and library is not None:
        first += [Candidate(p) for p in library.get(missing) if holds is None or not holds(p)]
    first.sort(key=lambda c: -strength.get(c.doc_id, 0.0))
    moved = {c.doc_id for c in first}
    return [*first, *(c for c in candidates if c.doc_id not in moved)]


def overruled(focus: str, paper: Paper, candidates: Sequence[Candidate], owners: Owners | None
              ) -> tuple[str, tuple[str, ...]] | None:
    """When the name rule would not let ``paper`` stand for the work the sentence names (a written key checked as
    a fill is: a cousin, or another paper while the library holds the named one): why, and the doc_ids of the
    named work's own papers in the library (strongest first). None when it stands."""
    decision = decide(focus, candidates, Selection("found", paper, 1.0, "check"), owners, 0.0)
    if decision is None or decision.action == "kept":
        return None
    found = owners.of(decision.name) if owners is not None else ()
    named = tuple(dict.fromkeys([*found, *(c.doc_id for c in decision.candidates[:1]
                                           if decision.action == "filled")]))
    why = f"the sentence names {decision.name}: {decision.top.why}"
    return why, named
