"""Names as evidence: the work a sentence names at its marker, the names a paper goes by, and how the two relate.

The one typed API every stage reads (the fill's name rule, the names agent, the literature tier, the confidence and
the Check page):

- :func:`mention_in` ``(sentence, marker_pos=None, surnames=()) -> Mention | None``: the **named-slot detector**.
  Rule: the nearest name written before the slot's marker (:func:`~citefinder.retrieve.query.mentions.name_mentions`)
  names the cited work when (1) it ends within :data:`NEAR` words of the marker, followed only by kind or size words
  ("the Transformer architecture [", "BERT large ["); (2) it is written as a name (a capital or a digit: "dropout" is
  a technique); (3) it is one word ("BERT", "Sentence-BERT", "GPT-2", "BERT-large"), a name with a version mark ("X
  v2", "ShuffleNet V2") or a landmark's known name ("Mask R-CNN"); (4) the marker is not the subject of its clause
  ("[CITATION] fine-tuned BERT" names what it used). The mention is split into its **base**, a **size** (``-large``,
  ``-base``, ``-small``, ``-tiny``, ``-mini``, ``-medium``, ``-huge``, ``-7B``, a depth ``-50``; ``-XL`` only after a
  name ending in a digit, "T5-XL") -- the same work -- and a **version** mark (``v2``, ``V2``, ``++``, a single digit
  after a separator, "GPT-2"; ``-XL`` after a word, "Transformer-XL") -- another work, a sequel.
  Its **reading**: "person" when the word is the surname of an author of the library (``surnames``) and the sentence
  reads it as one ("Following Adam [CITATION]": a bare capitalised word after a person cue such as following / by /
  see / as in / like / after, no article, no kind word after it); "library" when it is the plural of a name read as
  software ("in Transformers [CITATION]", "the Transformers library ["); else "work".
- :func:`names_of` ``(paper, extra=()) -> NameSet``: every name a paper goes by, each with where it came from: a
  landmark's known name ("known"), its title's head before a colon, a parenthesised acronym of its title or a short
  title that is a name ("title"), a name its abstract introduces -- "we propose / introduce / present X" within the
  first words after the verb, "called / named X", "X, a ...", an acronym defined there "(X)" whose letters start the
  words before it ("abstract") -- and names given by the caller (``extra``: the citation memory's "memory", the
  literature's record "literature").
- :func:`relation` ``(mention, names) -> "same" | "variant" | "sequel" | "other" | "none"``: "same": the paper is the
  named work (its own name, any size); "sequel": one is a version of the other ("X" vs "X v2", "GPT-2" vs "GPT-3",
  "Transformer" vs "Transformer-XL"); "variant": a derived work whose one-word name contains the name (ALBERT,
  Sentence-BERT for BERT) or that holds the name only as a title head while the name is a landmark's known name
  (*Transformers: State-of-the-Art NLP* for "the Transformer"); "other": neither; "none": no mention.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

from citefinder.index.names import introduced_names, known_name_keys, known_names, normalize_name
from citefinder.library.identity import normalize_title
from citefinder.retrieve.query import mentions
from citefinder.types import Paper

Relation = Literal["same", "variant", "sequel", "other", "none"]
Reading = Literal["work", "person", "library"]
NEAR = 3  # the name must end within this many words before the marker
# words that may stand between the name and the marker: "the Transformer architecture [CITATION]", "BERT large ["
AFTER_NAME = frozenset("model models architecture architectures network networks algorithm method optimizer "
                       "framework base large small tiny mini medium huge giant".split())
SIZES = frozenset("base large small tiny mini medium huge giant xxl".split())
_SIZE = re.compile(r"[\s_-]+(base|large|small|tiny|mini|medium|huge|giant|xxl|\d+(?:\.\d+)?[bmk]|\d{2,3})$", re.I)
_XL = re.compile(r"[\s_-]+(xl)$", re.I)
_VERSION = re.compile(r"(?:[\s_-]*[vV](\d+(?:\.\d+)?)|(\+\+)|[\s_-]+(\d))$")
_PERSON_CUE = re.compile(r"\b(?:following|follow|follows|followed|by|after|see|cf\.?|as in|like|unlike|of)\s*$",
                         re.I)
_LIBRARY_CUE = re.compile(r"\b(?:in|with|using|via|from)\s*$", re.I)
_LIBRARY_AFTER = frozenset("library libraries toolkit package codebase".split())
_ARTICLE = frozenset("the a an".split())
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*\+*")
_PAREN = re.compile(r"\(([A-Za-z][A-Za-z0-9+\-]{1,15})\)")


def split_name(written: str) -> tuple[str, str, str]:
    """``written`` -> (base, size, version): "BERT-large" -> ("BERT", "large", ""); "GPT-2" -> ("GPT", "", "2");
    "Llama-2-7B" -> ("Llama", "7B", "2"); "Transformer-XL" -> ("Transformer", "", "XL"); "T5-XL" -> ("T5", "XL", "")."""
    base, size, version = written.strip(), "", ""
    while True:
        m = _SIZE.search(base)
        x = _XL.search(base) if m is None else None
        if m is not None and len(base[:m.start()]) >= 2:
            size, base = size or m.group(1), base[:m.start()]
        elif x is not None and base[:x.start()][-1:].isdigit():
            size, base = size or x.group(1), base[:x.start()]
        else:
            break
    x = _XL.search(base)
    if x is not None and len(base[:x.start()]) >= 2:
        return base[:x.start()], size, x.group(1)
    m = _VERSION.search(base)
    if m is not None and base[:m.start()].strip(" -_"):
        version = next(g for g in m.groups() if g)
        version = f"v{version}" if m.group(1) else version
        base = base[:m.start()]
    return base.strip(" -_"), size, version


def _key(written: str) -> str:
    return normalize_name(written)


@dataclass(frozen=True)
class Mention:
    """The work a sentence names at its marker. ``written``: as written ("BERT-large"); ``base``: without size nor
    version ("BERT"); ``size``: the size mark ("large"), the same work; ``version``: a version mark ("v2", "2",
    "++", "XL"), another work; ``reading``: "work", "person" (an author's surname read as a person), "library"."""

    written: str
    base: str
    size: str = ""
    version: str = ""
    reading: Reading = "work"

    @property
    def name(self) -> str:
        """The name of the work without its size: "BERT", "GPT-2", "X v2"."""
        return f"{self.base}{'-' + self.version if self.version else ''}"

    @property
    def key(self) -> str:
        """The normalised name of the work (size dropped, version kept): "bert", "gpt2", "xv2"."""
        return _key(self.base + self.version)

    @property
    def base_key(self) -> str:
        return _key(self.base)


def _with_marker(sentence: str, marker_pos: int | None) -> str:
    if marker_pos is None:
        return sentence
    return f"{sentence[:marker_pos].rstrip()} {mentions.THIS} {sentence[marker_pos:].lstrip()}"


def reading_of(text: str, name: str, surnames: Collection[str] = ()) -> Reading:
    """How the (cleaned) sentence reads ``name`` written right before its marker (see the module doc)."""
    before = mentions.split_focus(text)[0][mentions.split_focus(text)[1]]
    at = before.rfind(name)
    head, tail = (before[:at], before[at + len(name):]) if at >= 0 else (before, "")
    after = [w.lower() for w in _TOKEN.findall(tail)]
    prev = [w.lower() for w in _TOKEN.findall(head)][-1:]
    one_word = " " not in name and "-" not in name and name[:1].isupper() and name[1:].islower()
    if one_word and name.lower() in {s.lower() for s in surnames}:
        kind_after = any(w in AFTER_NAME for w in after)
        if not kind_after and not (prev and prev[0] in _ARTICLE) and _PERSON_CUE.search(head):
            return "person"
    if name.endswith("s") and not name.endswith("ss") and name[:1].isupper():
        if any(w in _LIBRARY_AFTER for w in after) or (not after and _LIBRARY_CUE.search(head)):
            return "library"
    return "work"


def mention_in(sentence: str, marker_pos: int | None = None, *, surnames: Collection[str] = ()) -> Mention | None:
    """The work ``sentence`` names at its marker (the named-slot detector, rule in the module doc), or None.
    ``sentence``: a slot's focus (this slot written [CITATION], others [OTHER]), or plain text with the marker's
    character offset ``marker_pos``; ``surnames``: the library's authors' surnames (for the person reading)."""
    from citefinder.retrieve.query.reformulate import clean_focus

    text = clean_focus(_with_marker(sentence, marker_pos))
    if mentions.THIS not in text or mentions.is_subject(text):
        return None
    names = mentions.name_mentions(text)
    if not names:
        return None
    name = names[0]
    if len(names) > 1 and names[1].startswith(name + " ") and split_name(names[1])[2]:
        name = names[1]  # "X v2": the run with its version mark
    base, size, version = split_name(name)
    if len(_key(base)) < 2 or not any(c.isupper() or c.isdigit() for c in name):
        return None
    if " " in base.strip() and _key(name) not in known_name_keys() and _key(base) not in known_name_keys():
        return None
    near = mentions.near_words(text, NEAR + 1).split()
    last = name.split()[-1]
    if last not in near:
        return None
    after = near[len(near) - near[::-1].index(last):]
    if len(near) - len(after) > NEAR + 1 or any(w.lower() not in AFTER_NAME and w.lower() not in _LIBRARY_AFTER
                                                 for w in after):
        return None
    return Mention(name, base, size, version, reading_of(text, name, surnames))


@dataclass(frozen=True)
class Name:
    """One name a paper goes by: as written, normalised, its base and version (:func:`split_name`), and where it
    came from ("known", "title", "abstract", "memory", "literature")."""

    written: str
    key: str
    base_key: str
    version: str
    source: str


@dataclass(frozen=True)
class NameSet:
    """Every name a paper goes by (:func:`names_of`)."""

    names: tuple[Name, ...] = ()

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(n.key for n in self.names)

    def by(self, key: str) -> tuple[Name, ...]:
        return tuple(n for n in self.names if n.key == key)


def _name(written: str, source: str) -> Name | None:
    base, _size, version = split_name(written)
    key = _key(base + version)
    return Name(written.strip(), key, _key(base), version, source) if len(key) >= 2 else None


def known_for(title: str) -> tuple[str, ...]:
    """The known names of the landmark work titled ``title``, also when a .bib shortened its title."""
    norm = normalize_title(title)
    exact = known_names().get(norm)
    if exact is not None or len(norm) < 20:
        return exact or ()
    return next((names for known, names in known_names().items()
                 if len(known) >= 20 and (norm in known or known in norm)), ())


def title_names(title: str) -> list[str]:
    """The names a title gives its paper: its head before a colon, parenthesised acronyms, a short title that is a
    name ("Mask R-CNN", "Wasserstein GAN")."""
    title = (title or "").strip()
    out: list[str] = []
    head, sep, rest = title.partition(":")
    if sep and rest.strip() and 1 <= len(head.split()) <= 3:
        out.append(head.strip())
    out += _PAREN.findall(title)
    words = title.split()
    if not sep and 1 <= len(words) <= 3 and any(sum(c.isupper() for c in w) >= 2 or any(c.isdigit() for c in w)
                                                  for w in words):
        out.append(title)
    return out


def names_of(paper: Paper, extra: Iterable[tuple[str, str]] = ()) -> NameSet:
    """Every name ``paper`` goes by (see the module doc); ``extra``: (name, source) pairs the caller knows (the
    citation memory's names, the literature's record)."""
    found: list[Name | None] = [_name(n, "known") for n in known_for(paper.title or "")]
    found += [_name(n, "title") for n in title_names(paper.title or "")]
    found += [_name(n, "abstract") for n in introduced_names(paper.abstract or "")]
    found += [_name(n, source) for n, source in extra]
    seen: dict[str, Name] = {}
    for n in found:
        if n is not None and n.key not in seen:
            seen[n.key] = n
    return NameSet(tuple(seen.values()))


def relation(mention: Mention | None, names: NameSet) -> Relation:
    """How the paper named ``names`` stands to the work ``mention`` names (see the module doc)."""
    if mention is None or mention.reading == "person":
        return "none"
    if mention.reading == "library":
        written = mention.written.lower()
        same = any(n.written.lower() == written and n.source != "known" for n in names.names)
        return "same" if same else "other"
    key, known = mention.key, mention.key in known_name_keys()
    own = [n for n in names.names if n.key in (key, _key(mention.written))]
    if own and (not known or any(n.source == "known" for n in own)):
        return "same"
    if any(n.base_key == mention.base_key and n.version != mention.version for n in names.names):
        return "sequel"
    if any(mention.version == "" and n.base_key == key and n.version for n in names.names):
        return "sequel"
    if own:
        return "variant"  # a landmark's known name held only as a title head
    single = [n for n in names.names if " " not in n.written and n.source != "known"]
    if len(key) >= 3 and any(key in n.key and n.key != key and not n.key.replace(key, "").isdigit() for n in single):
        return "variant"
    return "other"
