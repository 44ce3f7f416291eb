"""The DSPy signatures (selector, query rewriter) and the numbered candidate list the selector reads.

Imports dspy: import this module only where an LLM is used (``citefinder.select.llm`` does so
lazily), so the pipeline without an LLM never loads dspy.
"""

from collections.abc import Sequence

import dspy

from citefinder.types import Candidate, Paper

MAX_AUTHORS = 3


def _authors(paper: Paper) -> str:
    names = list(paper.authors)
    if len(names) > MAX_AUTHORS:
        return ", ".join(names[:MAX_AUTHORS]) + " et al."
    return ", ".join(names)


def _truncate(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,.;:") + "…"


def format_candidate(number: int, paper: Paper, abstract_chars: int) -> str:
    """``[1] Title (Year, Venue) — Authors. Abstract…`` with the abstract cut at ``abstract_chars``."""
    meta = ", ".join(str(x) for x in (paper.year, paper.venue) if x)
    line = f"[{number}] {paper.title}" + (f" ({meta})" if meta else "")
    authors = _authors(paper)
    if authors:
        line += f" — {authors}."
    if abstract_chars > 0 and paper.abstract:
        line += " " + _truncate(paper.abstract, abstract_chars)
    return line


def format_candidates(candidates: Sequence[Candidate], abstract_chars: int) -> str:
    """The numbered list shown to the LLM, one candidate per line, numbers from 1."""
    return "\n".join(format_candidate(i, c.paper, abstract_chars) for i, c in enumerate(candidates, 1))


class CitationRetrieval(dspy.Signature):
    """You are given a passage from a scientific paper in which one citation was replaced by
    [CITATION], and a numbered list of candidate papers. Choose the candidate paper that the
    [CITATION] refers to. This is a closed world: the answer is one of the numbered candidates
    or none of them. Judge by what the passage says about the cited work (its method, data set,
    result, name or authors) against each candidate's title and abstract. If no candidate is the
    cited paper, answer none rather than the closest topic."""

    citation_context: str = dspy.InputField(desc="passage with the citation replaced by [CITATION]")
    candidates: str = dspy.InputField(desc='numbered candidates: "[n] Title (Year, Venue) — Authors. Abstract"')
    selected: str = dspy.OutputField(desc='the number n of the cited candidate, e.g. "3", or "none"')
    # A string, parsed leniently by the selector: a pick must not be lost to a confidence written "high".
    confidence: str = dspy.OutputField(desc="probability between 0 and 1 that the selection is right, e.g. 0.8")


class RewriteQueries(dspy.Signature):
    """You are given a passage from a scientific paper in which one citation was replaced by
    [CITATION]. Write three short search queries that would find the cited paper in a library
    of titles and abstracts: the key terms and names, the claim the passage attributes to the
    cited work, and the method, model or data set it refers to. Use only what the passage says."""

    citation_context: str = dspy.InputField(desc="passage with the citation replaced by [CITATION]")
    keyword_query: str = dspy.OutputField(desc="key terms and names, a few words")
    claim_query: str = dspy.OutputField(desc="the claim attributed to the cited work, one sentence")
    method_query: str = dspy.OutputField(desc="the method, model or data set of the cited work, a few words")
