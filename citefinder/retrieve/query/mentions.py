"""What the text right next to a citation marker says: the slot's own clause, names, authors.

Works on a slot's ``focus`` sentence (this slot written ``[CITATION]``, other slots ``[OTHER]``):

- :func:`local_part`: when several slots share a sentence ("DBSCAN [CITATION] and HDBSCAN
  [OTHER]"), the part that belongs to this slot: the text since the previous marker, or, when
  that is nearly empty ("[CITATION] proposed X, while [OTHER] ..."), the text up to the next one.
- :func:`name_mentions`: the names written just before the marker (acronyms, CamelCase and
  hyphenated model names, "the Transformer", "the X dataset"), nearest first, then those just after.
- :func:`author_mentions`: "Vaswani et al. (2017)", "Smith and Jones [CITATION]", "Smith (2019)".
"""

from __future__ import annotations

import re

from citefinder.types import AuthorMention

THIS = "[CITATION]"
OTHER = "[OTHER]"
_MARKER = re.compile(r"\[(?:CITATION|OTHER)\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'/.][A-Za-z0-9]+)*\+*")
_CONTENT = re.compile(r"[A-Za-z]{3,}")

NAME_WINDOW = 15  # words before the marker searched for a name (nearest first)
AFTER_WINDOW = 6  # words after it, when the marker is the subject ("[CITATION] proposed X")
# A marker followed by one of these is the subject of its clause: its part of the sentence follows it.
_SUBJECT_VERB = re.compile(
    r"\s*(?:et al\.?\s*)?(?:\(\d{4}\)\s*)?(?:also\s+|first\s+|recently\s+|further\s+)?"
    r"(?:propos|introduc|show|use[sd]?\b|using|present|develop|describ|found|find|demonstrat|stud|suggest|appl|"
    r"extend|employ|observ|argu|report|achiev|combin|train|consider|investigat|explor|analy[sz]|defin|provid|"
    r"adopt|learn|design|formulat|prov|establish|improv|obtain|model|leverag|exploit|generaliz|modif|replac|"
    r"releas|collect|creat|construct|build|built|annotat|focus|address|tackl|solv|pioneer|advocat|call|"
    r"coin|dub|nam|term|reli|rely|compar|evaluat|measur|examin|argu)"
)

# Capitalised words that are not names of things.
_COMMON = frozenset(
    """a an the this that these those we our in on for of to and or but as by with from at it its is are was were
    be been has have had can may one two three first second some many most such other others each both all
    however moreover furthermore also further recently similarly finally previous prior following while
    although though unlike like since because thus hence then there here table figure fig section sec eq
    equation appendix chapter algorithm theorem lemma definition proposition corollary example note e g i
    et al see cf vs ie eg """.split()
)
# "the X dataset", "X benchmark": X is the name even when it is a common word.
_KIND_WORDS = frozenset("dataset datasets corpus corpora benchmark benchmarks model models architecture "
                        "algorithm method network networks framework toolkit library treebank task challenge".split())


def split_focus(focus: str) -> tuple[list[str], int]:
    """The focus sentence cut at markers, and the index of the segment just before this slot's marker."""
    parts = _MARKER.split(focus)
    markers = _MARKER.findall(focus)
    try:
        at = markers.index(THIS)
    except ValueError:
        return [focus], 0
    return parts, at


def _segments(focus: str) -> tuple[str, str]:
    """The text between the previous marker and this slot's, and between it and the next."""
    parts, at = split_focus(focus)
    return parts[at], parts[at + 1] if at + 1 < len(parts) else ""


def is_subject(focus: str) -> bool:
    """Whether this slot's marker is the subject of its clause ("[CITATION] proposed X")."""
    before, after = _segments(focus)
    return bool(_SUBJECT_VERB.match(after)) and len(_CONTENT.findall(before.split(",")[-1])) <= 2


def local_part(focus: str) -> str:
    """The slot's own part of its sentence; "" when the sentence holds no other marker (all of it is)."""
    if OTHER not in focus or THIS not in focus:
        return ""
    before, after = _segments(focus)
    if is_subject(focus) or len(_CONTENT.findall(before)) < 2:
        if is_subject(focus):
            return f"{before.split(',')[-1]} {after}".strip(" ,;")
        return f"{before} {after}".strip(" ,;")
    return before.strip(" ,;")


NEAR_WORDS = 8


def near_words(focus: str, n: int = NEAR_WORDS) -> str:
    """The ``n`` words right before this slot's marker (right after it when it is the subject of its clause)."""
    if THIS not in focus:
        return ""
    before, after = _segments(focus)
    if is_subject(focus):
        return " ".join(_WORD.findall(after)[:n])
    return " ".join(_WORD.findall(before)[-n:])


def _is_name(word: str, sentence_start: bool) -> bool:
    core = word.strip("+")
    if core.lower() in _COMMON or len(core) < 2:
        return False
    if any(c.isdigit() for c in core) and any(c.isalpha() for c in core):
        return True
    if sum(c.isupper() for c in core) >= 2:  # BERT, GloVe, ResNet, R-CNN
        return True
    if "-" in core and core[0].isupper():
        return True
    return core[0].isupper() and not sentence_start and len(core) >= 3


def _names_in(words: list[tuple[str, int]], text: str, reverse: bool) -> list[str]:
    """Names among ``words`` ((word, offset) pairs), nearest the marker first, with multi-word runs."""
    found: list[str] = []
    runs: list[list[str]] = []
    current: list[str] = []
    for i, (word, offset) in enumerate(words):
        prev = text[:offset].rstrip()
        # a capitalised word right next to the marker is a name even when it opens the sentence ("Graclus [CITATION]")
        adjacent = (i == len(words) - 1) if reverse else (i == 0)
        start = (not prev or prev[-1] in ".!?:") and not (adjacent and not text[offset + len(word):].strip(" ,;"))
        nxt = words[i + 1][0].lower() if i + 1 < len(words) else ""
        named_kind = nxt in _KIND_WORDS and word[:1].isupper() and word.lower() not in _COMMON
        if _is_name(word, start) or named_kind:
            current.append(word)
        else:
            if current:
                runs.append(current)
            current = []
    if current:
        runs.append(current)
    ordered = list(reversed(runs)) if reverse else runs
    for run in ordered:
        if len(run) > 1:
            found.append(" ".join(run))
        found += list(reversed(run)) if reverse else run
    seen: set[str] = set()
    unique: list[str] = []
    for n in found:
        if n.lower() not in seen:
            seen.add(n.lower())
            unique.append(n)
    return unique


def name_mentions(focus: str) -> tuple[str, ...]:
    """Names written next to this slot's marker: those just before it, nearest first; those just
    after it when the marker is the subject of its clause ("[CITATION] proposed GloVe")."""
    if THIS not in focus:
        return ()
    before, after = _segments(focus)
    if is_subject(focus):
        words = [(m.group(0), m.start()) for m in _WORD.finditer(after)][:AFTER_WINDOW]
        names = _names_in(words, after, reverse=False)
    else:
        words = [(m.group(0), m.start()) for m in _WORD.finditer(before)][-NAME_WINDOW:]
        names = _names_in(words, before, reverse=True)
    names += [n for n in _known_phrases(after if is_subject(focus) else before, is_subject(focus)) if n not in names]
    surnames = {a.surname.lower() for a in author_mentions(focus)}
    names = [n for n in names if n.lower() not in surnames and not _AUTHORISH.fullmatch(n)]
    return tuple(_aside_last(names, before) if not is_subject(focus) else names)


# "Y, following the X design, [CITATION]", "T5, like GPT-2, [CITATION]": a name in an aside set off by commas
# right before the marker is what the cited work follows or resembles, not the work cited.
_ASIDE = re.compile(
    r",\s*(?:(?:which|that)\s+)?(?:following|follows|like|unlike|as in|based on|built (?:on|upon)|building on|"
    r"on top of|inspired by|similar to|extending|extends|an extension of|a variant of|a successor (?:of|to)|"
    r"in the style of|after|instead of|replacing|beyond|compared (?:to|with))\b[^,]*,\s*$", re.IGNORECASE)
ASIDES = True  # bench/probes/names_variants.py (at bc9259c) measured with and without


def _aside_last(names: list[str], before: str) -> list[str]:
    """``names`` with those written only inside a closing aside (see :data:`_ASIDE`) moved last, when a name
    outside it is left to come first."""
    m = _ASIDE.search(before) if ASIDES else None
    if m is None:
        return names
    aside, rest = before[m.start():], before[: m.start()]
    inside = [n for n in names if n in aside and n not in rest]
    outside = [n for n in names if n not in inside]
    return outside + inside if outside and inside else names


def _known_phrases(segment: str, leading: bool) -> list[str]:
    """Lower-case names of landmark works ("batch normalization", "dropout") right next to the marker."""
    from citefinder.index.names import known_name_keys, normalize_name

    words = _WORD.findall(segment)
    words = words[:4] if leading else words[-4:]
    found = []
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i : i + n])
            if normalize_name(phrase) in known_name_keys() and phrase not in found:
                found.append(phrase)
    return found


_SURNAME = r"(?:(?:van|von|de|der|den|di|da|du|le|la|dos|del)\s+)*[A-Z][A-Za-z'\u00C0-\u017F-]+"
_AUTHOR = re.compile(
    rf"(?P<first>{_SURNAME})(?:\s+(?:and|&)\s+(?P<second>{_SURNAME})|\s+et\s+al\.?)?"
    r"(?:'s)?\s*(?:\(\s*(?P<year>(?:19|20)\d\d)[a-z]?\s*\)|,\s*(?P<year2>(?:19|20)\d\d)[a-z]?)?"
)
_AUTHORISH = re.compile(r"et al\.?")


def author_mentions(focus: str) -> tuple[AuthorMention, ...]:
    """Authors named next to this slot's marker, nearest first.

    Counts as a mention: "Surname et al.", "Surname and Other", or "Surname (2019)" / "Surname, 2019"
    — a capitalised word alone is not (it is far more often a name of a method or a place).
    """
    if THIS not in focus:
        return ()
    before, after = _segments(focus)
    window = before[-120:]
    found: list[tuple[int, AuthorMention]] = []
    for m in _AUTHOR.finditer(window):
        year = m.group("year") or m.group("year2")
        has_etal = "et al" in m.group(0)
        if not (has_etal or m.group("second") or year):
            continue
        surname = m.group("first").split()[-1]
        if surname.lower() in _COMMON:
            continue
        found.append((m.start(), AuthorMention(surname, int(year) if year else None)))
    year_after = re.match(r"\s*\(?\s*((?:19|20)\d\d)\s*\)?", after)  # "Smith et al. [CITATION] (2019)"
    mentions = [a for _, a in sorted(found, key=lambda t: -t[0])]
    if year_after and mentions and mentions[0].year is None:
        mentions[0] = AuthorMention(mentions[0].surname, int(year_after.group(1)))
    return tuple(dict.fromkeys(mentions))
