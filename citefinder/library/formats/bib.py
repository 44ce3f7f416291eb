"""BibTeX reader (bibtexparser v2): one Paper per entry, malformed entries reported by key and line."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from citefinder.library import bibentry
from citefinder.library.formats.common import RecordError, arxiv_id_in_text, bib_key, build_paper
from citefinder.text.decode import decode_text
from citefinder.types import ImportFailure, Paper

log = logging.getLogger(__name__)

_BLOCK_KEY = re.compile(r"@\s*\w+\s*[{(]\s*([^,\s{}()=]+)")
_UNESCAPED_TEXT_CHARS = re.compile(r"(?<!\\)([%&])")
_LATEX_SYNTAX = re.compile(r"[\\{}$~%^_&#]|--|``|''")
_DECODED_FIELDS = ("title", "booktitle", "journal", "abstract", "howpublished", "institution", "school", "publisher")


class LatexDecoder:
    """LaTeX -> unicode for field values (``{\\"u}`` -> ``ü``, ``\\&`` -> ``&``, braces dropped)."""

    def __init__(self) -> None:
        from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

        context = get_default_latex_context_db()
        context.add_context_category(
            "citefinder-bib",
            prepend=True,
            macros=[
                MacroTextSpec("url", simplify_repl="%s"),
                MacroTextSpec("textbraceleft", simplify_repl="{"),
                MacroTextSpec("textbraceright", simplify_repl="}"),
            ],
        )
        self._decoder = LatexNodes2Text(latex_context=context, math_mode="text", keep_braced_groups=False)

    def __call__(self, value: str) -> str:
        if not _LATEX_SYNTAX.search(value):
            return value  # most values are plain text; pylatexenc costs ~1 ms per call
        # In BibTeX a bare % or & is text; for LaTeX % starts a comment and & is an alignment tab.
        text = _UNESCAPED_TEXT_CHARS.sub(r"\\\1", value)
        try:
            text = self._decoder.latex_to_text(text)
        except Exception:  # pylatexenc raises assorted errors on odd input; keep the raw text then
            log.debug("could not decode LaTeX in %r", value[:80])
            text = value.replace("{", "").replace("}", "")
        # pylatexenc renders \textasciicircum as a modifier letter; the writer needs the caret back.
        return text.replace("\u02c6", "^")


def _authors(raw: str, latex: LatexDecoder) -> list[str]:
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    names = []
    for name in split_multiple_persons_names(raw):
        try:
            merged = parse_single_name_into_parts(name, strict=False).merge_first_name_first
        except Exception:  # an unparsable name is still better kept as written
            merged = name
        names.append(latex(merged))
    return names


def _entry_source(name: str, line: int | None) -> str:
    return f"{name}:{line + 1}" if line is not None else name


_MONTHS = dict(zip("jan feb mar apr may jun jul aug sep oct nov dec".split(),
                   "January February March April May June July August September October November December".split(),
                   strict=True))


def _parts(raw: str) -> list[str]:
    """A BibTeX value split at its top-level ``#`` (concatenation), each part as written."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(raw):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif c == "#" and depth == 0 and not quoted:
            parts.append(raw[start:i])
            start = i + 1
    parts.append(raw[start:])
    return [p.strip() for p in parts]


def resolve_value(raw: str, strings: dict[str, str]) -> str:
    """A field's value as BibTeX reads it: ``{..}`` and ``".."`` parts unwrapped, ``@string`` names
    and month macros replaced, parts joined by ``#`` concatenated (``acl # " 2020"``)."""
    out = []
    for part in _parts(raw):
        if len(part) >= 2 and ((part[0] == "{" and part[-1] == "}") or (part[0] == '"' and part[-1] == '"')):
            out.append(part[1:-1])
        elif part.lower() in strings:
            out.append(strings[part.lower()])
        else:
            out.append(_MONTHS.get(part.lower(), part))
    return "".join(out)


def _strings(library) -> dict[str, str]:
    """The file's ``@string`` definitions (lower-cased names), each resolved with those before it."""
    from bibtexparser.model import String

    strings: dict[str, str] = {}
    for block in library.blocks:
        if isinstance(block, String) and isinstance(block.value, str):
            strings[block.key.strip().lower()] = resolve_value(block.value, strings)
    return strings


def _fields(entry, strings: dict[str, str] | None = None) -> dict[str, str]:
    return {f.key.lower(): resolve_value(f.value, strings or {}) for f in entry.fields if isinstance(f.value, str)}


def _inherit(fields: dict[str, str], parents: dict[str, dict[str, str]]) -> dict[str, str]:
    """Fields a ``crossref`` entry inherits from its parent (BibTeX: every field it lacks; the
    parent's title also names the child's booktitle, as biblatex does)."""
    parent = parents.get(fields.get("crossref", "").strip().lower())
    if not parent:
        return fields
    merged = {k: v for k, v in parent.items() if k not in ("crossref", "ids")}
    if "title" in parent and "booktitle" not in fields:
        merged["booktitle"] = parent["title"]
    merged.update(fields)
    return merged


def paper_from_entry(entry, name: str, latex: LatexDecoder, parents: dict[str, dict[str, str]] | None = None,
                      strings: dict[str, str] | None = None) -> Paper:
    fields = _inherit(_fields(entry, strings), parents or {})
    decoded = {k: latex(fields[k]) for k in _DECODED_FIELDS if k in fields}
    eprint = fields.get("eprint") or fields.get("arxiv") or fields.get("arxivid")
    prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "").lower()
    arxiv = None
    if eprint and (prefix in ("", "arxiv")):
        arxiv = eprint
    # where the work appeared: proceedings or journal, else (reports, theses, books) who issued it
    venue = next((decoded[f] for f in ("booktitle", "journal", "howpublished", "institution", "school", "publisher")
                  if decoded.get(f)), None)
    arxiv = arxiv or arxiv_id_in_text(venue) or arxiv_id_in_text(fields.get("note"))
    paper = build_paper(
        name,
        title=decoded.get("title"),
        authors=_authors(fields.get("author", ""), latex),
        year=fields.get("year") or fields.get("date"),
        venue=venue,
        abstract=decoded.get("abstract"),
        doi=fields.get("doi"),
        arxiv_id=arxiv,
        url=fields.get("url"),
        entry_type=entry.entry_type.lower(),
        key=entry.key,
        pages=fields.get("pages"),
        volume=fields.get("volume"),
    )
    # a key the .bib defines is the key, whatever it looks like (a URL: https://doi.org/10.48550/arxiv.2106.07704)
    return paper if paper.key or not bib_key(entry.key) else replace(paper, key=bib_key(entry.key))


def read_bib(path: Path) -> Iterator[Paper | ImportFailure]:
    """Papers from a BibTeX file; each malformed entry becomes an ImportFailure with its key and
    line, and the other entries are still read."""
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock, Entry, ParsingFailedBlock

    name = path.name
    text = decode_text(path.read_bytes())
    try:
        # no middleware: values come as written, and resolve_value reads them (concatenation included)
        library = bibtexparser.parse_string(text, parse_stack=[])
    except RecursionError:
        yield ImportFailure(name, "the file is nested too deeply (unbalanced braces?) to be read as BibTeX")
        return
    latex = LatexDecoder()
    strings = _strings(library)
    parents = {b.key.strip().lower(): _fields(b, strings) for b in library.blocks if isinstance(b, Entry)}
    raw = _Raw(library)
    for position, block in enumerate(library.blocks):
        line = block.start_line
        if isinstance(block, DuplicateBlockKeyBlock) and isinstance(block.ignore_error_block, Entry):
            # A reused key is a slip in the file, not bad data: keep the entry (dedupe comes later).
            block = block.ignore_error_block
        if isinstance(block, Entry):
            try:
                paper = paper_from_entry(block, name, latex, parents, strings)
                yield replace(paper, bibtex=raw.text(block), position=position)
            except RecordError as e:
                yield ImportFailure(_entry_source(name, line), f"entry '{block.key}' {e}")
            except Exception as e:  # noqa: BLE001 - one odd entry must not lose the rest of the file
                log.warning("%s: entry %r could not be read", name, block.key, exc_info=True)
                yield ImportFailure(_entry_source(name, line), f"entry '{block.key}' could not be read "
                                    f"({type(e).__name__}: {str(e)[:120]})")
        elif isinstance(block, ParsingFailedBlock):
            m = _BLOCK_KEY.match((block.raw or "").lstrip())
            key = m.group(1) if m else "?"
            where = f" at line {line + 1}" if line is not None else ""
            if isinstance(block, DuplicateFieldKeyBlock):
                problem = f"field {', '.join(sorted(block.duplicate_keys))} is given more than once"
            else:
                problem = _describe(block.error)
            reason = f"malformed BibTeX entry '{key}'{where}: {problem}"
            yield ImportFailure(_entry_source(name, line), reason)


class _Raw:
    """Each entry's own text as the file has it (:mod:`citefinder.library.bibentry`): the entry, the
    ``@string`` definitions it uses, its crossref parent."""

    def __init__(self, library) -> None:
        from bibtexparser.model import Entry, String

        self.strings = {b.key.strip().lower(): b.raw for b in library.blocks if isinstance(b, String) and b.raw}
        self.entries = {b.key.strip().lower(): b.raw for b in library.blocks if isinstance(b, Entry) and b.raw}

    def text(self, entry) -> str | None:
        if not entry.raw:
            return None
        parent = bibentry.crossref_of(entry.raw)
        parents = [self.entries[parent.lower()]] if parent and parent.lower() in self.entries else []
        used = bibentry.macros_used("\n".join([entry.raw, *parents]), self.strings) if self.strings else []
        return bibentry.stored_text([self.strings[n] for n in used], entry.raw, parents)


def _describe(error: Exception) -> str:
    text = str(getattr(error, "abort_reason", "") or error).strip()
    if not text:
        text = "the entry is not closed or a field is broken (check its braces and commas)"
    return " ".join(text.split())
