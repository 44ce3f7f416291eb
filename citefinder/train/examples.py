"""Labeled examples for training (and for the DSPy picker optimisation): JSONL and LaTeX.

One example is ``{"id", "text", "gold": [doc_id], "answerable": true}`` — the schema of the
benchmark files in ../shared/data (read with :func:`citefinder.evaluate.load_items`). ``text``
is a citation context with a ``[CITATION]`` slot, or a literature-search question.

From a LaTeX project, every ``\\cite{..}`` / ``\\citep[..][..]{a,b}`` / ``\\citet{..}`` becomes
one example: its sentence and neighbours, that cite written ``[CITATION]`` and the other cites
removed; its keys are resolved through the .bib to library papers (DOI, then arXiv id, then
normalised title). Keys that resolve to nothing are reported, never guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citefinder.errors import InputError
from citefinder.evaluate.dataset import EvalItem, load_items
from citefinder.library.identity import dedupe_keys
from citefinder.text.decode import decode_text
from citefinder.text.slots import MARKER_RE, SLOT_TEXT, find_slots
from citefinder.types import Paper

if TYPE_CHECKING:
    from citefinder.library.store import Library

# Commands that put a citation at a place in the text (natbib and biblatex, any case, starred).
_SLOT_COMMANDS = frozenset(
    "cite citep citet citealp citealt citenum parencite textcite autocite footcite supercite smartcite".split()
)
# \citep*[see][p.~3]{key1, key2}: at most two optional arguments, then the keys.
CITE_RE = re.compile(r"\\(?P<cmd>[a-zA-Z]*cite[a-zA-Z]*)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{(?P<keys>[^{}]*)\}")
_COMMENT = re.compile(r"(?<!\\)%.*")
_BEGIN_DOC = re.compile(r"\\begin\{document\}")
_END_DOC = re.compile(r"\\end\{document\}")
_THEBIBLIOGRAPHY = re.compile(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}", re.DOTALL)
_BIB_COMMANDS = re.compile(
    r"\\(?:bibliography|bibliographystyle|addbibresource|printbibliography)\b(?:\[[^\]]*\])?(?:\{[^{}]*\})?"
)
_SLOT_MARK = "\ue010"  # a private-use character stands for a cite until the slots are found


def load_examples(paths: Sequence[Path], *, split: str | None = None) -> list[EvalItem]:
    """Examples from JSONL files, answerable ones with gold only; ids made unique per file."""
    items: list[EvalItem] = []
    seen: set[str] = set()
    for path in paths:
        for item in load_items(Path(path), split=split):
            if not (item.answerable and item.gold):
                continue
            if item.id in seen:
                unique = f"{Path(path).stem}:{item.id}"
                item = EvalItem(unique, item.text, item.gold, item.gold_titles, split=item.split)
            seen.add(item.id)
            items.append(item)
    return items


def example_record(item: EvalItem, **extra: Any) -> dict[str, Any]:
    """The JSONL record of one example (extra fields such as ``keys`` or ``source`` are kept)."""
    record: dict[str, Any] = {"id": item.id, "text": item.text, "gold": list(item.gold), "answerable": True}
    if item.gold_titles:
        record["gold_titles"] = list(item.gold_titles)
    if item.split:
        record["split"] = item.split
    return {**record, **{k: v for k, v in extra.items() if v not in (None, "", [], ())}}


def examples_jsonl(records: Iterable[dict[str, Any]]) -> bytes:
    """JSONL records as the bytes of a file (written by the caller through the one writer,
    :mod:`citefinder.text.safewrite`, which refuses to write over the paper or its .bib)."""
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")


# --- LaTeX -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TexCitation:
    """One citation command in a .tex file: its keys, line and context."""

    keys: tuple[str, ...]
    line: int  # 1-based line of the command in the .tex file
    command: str
    context: str  # sentence plus neighbours, this cite as [CITATION], other cites removed
    sentence: str
    focus: str = ""  # the sentence, this cite as [CITATION], the other cites in it as [OTHER]


def latex_body(tex: str) -> tuple[str, int]:
    """The document body with comments and the bibliography blanked (line breaks kept).

    Returns ``(body, lines_before)``: the body starts on line ``lines_before + 1`` of ``tex``.
    """
    text = "\n".join(_COMMENT.sub("", line) for line in tex.split("\n"))
    start = 0
    if m := _BEGIN_DOC.search(text):
        start = m.end()
    body = text[start:]
    if m := _END_DOC.search(body):
        body = body[: m.start()]
    body = _THEBIBLIOGRAPHY.sub(lambda m: "\n" * m.group(0).count("\n"), body)
    body = _BIB_COMMANDS.sub(" ", body)
    return body, text.count("\n", 0, start)


def latex_citations(tex: str, context_sentences: int = 1) -> list[TexCitation]:
    """Every citation command of ``tex`` that sits in the text (``\\nocite``, ``\\citeauthor`` ... excepted)."""
    body, lines_before = latex_body(tex)
    found: list[tuple[tuple[str, ...], int, str]] = []

    def replace(m: re.Match) -> str:
        cmd = m.group("cmd")
        keys = tuple(k.strip() for k in m.group("keys").split(",") if k.strip() and k.strip() != "?")
        if cmd.lower() not in _SLOT_COMMANDS or not keys:
            return " "  # \citeauthor{x}, \nocite{*}, \cite{?}: no slot of their own
        found.append((keys, lines_before + body.count("\n", 0, m.start()) + 1, cmd))
        return _SLOT_MARK

    marked = CITE_RE.sub(replace, body)
    # Markers a draft may already hold ([CITATION], [?]) are not cites of this project.
    marked = MARKER_RE.sub(" ", marked).replace(_SLOT_MARK, SLOT_TEXT).replace("~", " ")
    slots = find_slots(marked, context_sentences)
    if len(slots) != len(found):  # cannot happen unless the marker scan changes; fail loudly
        raise InputError(f"found {len(found)} citation commands but {len(slots)} slots; please report this file")
    return [TexCitation(keys, line, cmd, s.context, s.sentence, s.focus)
            for (keys, line, cmd), s in zip(found, slots, strict=True)]


# --- .bib keys -> library papers ---------------------------------------------------------------


def read_bib_entries(path: Path) -> tuple[dict[str, Paper], dict[str, str]]:
    """``({key: Paper}, {key: why it could not be read})`` for a .bib file."""
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry

    # The reader's own entry -> Paper conversion (LaTeX decoding, DOI/arXiv normalisation).
    from citefinder.library.formats.bib import LatexDecoder, paper_from_entry
    from citefinder.library.formats.common import RecordError

    path = Path(path)
    try:
        text = decode_text(path.read_bytes())
    except OSError as e:
        raise InputError(f"Cannot read the BibTeX file {path}: {e}") from e
    latex = LatexDecoder()
    papers: dict[str, Paper] = {}
    broken: dict[str, str] = {}
    for block in bibtexparser.parse_string(text).blocks:
        if isinstance(block, DuplicateBlockKeyBlock) and isinstance(block.ignore_error_block, Entry):
            block = block.ignore_error_block
        if not isinstance(block, Entry):
            continue
        try:
            papers.setdefault(block.key, paper_from_entry(block, path.name, latex))
        except RecordError as e:
            broken[block.key] = f"its entry in {path.name} {e}"
    return papers, broken


def library_index(library: "Library") -> dict[str, str]:
    """Dedupe key (``doi:``, ``arxiv:``, ``title:``) -> doc_id over every library paper."""
    index: dict[str, str] = {}
    for paper in library.iter_papers():
        for key in dedupe_keys(paper):
            index.setdefault(key, paper.doc_id)
        index.setdefault(f"id:{paper.doc_id}", paper.doc_id)
    return index


def resolve_paper(paper: Paper, index: dict[str, str]) -> tuple[str | None, str]:
    """``(doc_id, how)``: the library paper with the same DOI, else arXiv id, else normalised title."""
    for key in dedupe_keys(paper):
        if key in index:
            return index[key], key.split(":", 1)[0]
    return None, ""


@dataclass(frozen=True)
class LatexExamples:
    """What :func:`examples_from_latex` found: examples, and every key it could not resolve."""

    records: tuple[dict[str, Any], ...]  # JSONL records (id, text, gold, answerable, keys, source)
    citations: int  # citation commands in the text
    resolved: dict[str, str] = field(default_factory=dict)  # key -> doc_id
    resolved_via: dict[str, str] = field(default_factory=dict)  # key -> "doi" | "arxiv" | "title"
    unresolved: dict[str, str] = field(default_factory=dict)  # key -> reason
    dropped: int = 0  # citations none of whose keys resolved

    @property
    def items(self) -> list[EvalItem]:
        return [EvalItem(r["id"], r["text"], tuple(r["gold"])) for r in self.records]


def examples_from_latex(
    tex_path: Path, bib_paths: Sequence[Path], library: "Library", *, context_sentences: int = 1
) -> LatexExamples:
    """One example per citation of ``tex_path`` whose keys resolve (through ``bib_paths``) to library papers."""
    tex_path = Path(tex_path)
    try:
        tex = decode_text(tex_path.read_bytes())
    except OSError as e:
        raise InputError(f"Cannot read the LaTeX file {tex_path}: {e}") from e
    citations = latex_citations(tex, context_sentences)
    entries: dict[str, Paper] = {}
    broken: dict[str, str] = {}
    for bib in bib_paths:
        papers, bad = read_bib_entries(Path(bib))
        for key, paper in papers.items():
            entries.setdefault(key, paper)
        broken.update({k: v for k, v in bad.items() if k not in entries})
    index = library_index(library)
    bib_names = ", ".join(Path(b).name for b in bib_paths) or "no .bib given"

    resolved: dict[str, str] = {}
    via: dict[str, str] = {}
    unresolved: dict[str, str] = {}
    for key in dict.fromkeys(k for c in citations for k in c.keys):
        if key in broken:
            unresolved[key] = broken[key]
        elif key not in entries:
            unresolved[key] = f"no entry '{key}' in {bib_names}"
        else:
            doc_id, how = resolve_paper(entries[key], index)
            if doc_id:
                resolved[key], via[key] = doc_id, how
            else:
                unresolved[key] = f"'{entries[key].title}' is not in the library (no match by DOI, arXiv id or title)"

    records: list[dict[str, Any]] = []
    dropped = 0
    for n, cite in enumerate(citations, start=1):
        gold = list(dict.fromkeys(resolved[k] for k in cite.keys if k in resolved))
        if not gold:
            dropped += 1
            continue
        item = EvalItem(f"{tex_path.stem}:{cite.line}:{n}", cite.context, tuple(gold))
        records.append(example_record(item, keys=list(cite.keys), source=f"{tex_path.name}:{cite.line}"))
    return LatexExamples(tuple(records), len(citations), resolved, via, unresolved, dropped)
