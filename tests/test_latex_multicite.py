"""The LaTeX reader knows biblatex's multi-cite and title/full-cite commands (issue 27 item 9): their keys are
citations (checked, never listed as "never cited"), with each key's own span; a cite inside a preamble macro's
definition is never checked with the preamble as its sentence."""

from __future__ import annotations

from citefinder.check.bib import UNCITED, bib_problems
from citefinder.text.citations import find_citations
from citefinder.text.latex import scan_latex
from citefinder.types import Paper

TEX = r"""\documentclass{article}
\newcommand{\bmcite}{\citep{robertson2009}}
\begin{document}
Dense retrieval helps \cites[see][p.~3]{karpukhin2020,khattab2020}[cf.]{lewis2020}.
Surveys agree \parencites(global)(notes){devlin2019}{liu2019}, and \textcites{raffel2020}{brown2020} show it.
As \citetitle{vaswani2017} puts it \footfullcite{he2016}; \autocites{kingma2015}{ioffe2015} and \footcites{a1}{a2}.
\end{document}
"""
MULTI = ["karpukhin2020", "khattab2020", "lewis2020", "devlin2019", "liu2019", "raffel2020", "brown2020",
         "vaswani2017", "he2016", "kingma2015", "ioffe2015", "a1", "a2"]


def test_every_multi_cite_and_title_cite_key_is_a_citation_with_its_own_span():
    citations = find_citations(TEX)
    assert [c.key for c in citations] == MULTI
    for c in citations:
        assert TEX[c.start:c.end] == c.key
    assert {c.command for c in citations} >= {"\\cites", "\\parencites", "\\textcites", "\\citetitle",
                                               "\\footfullcite", "\\autocites", "\\footcites"}


def test_a_cite_in_a_preamble_macro_is_not_checked_but_counts_as_cited():
    assert "robertson2009" not in [c.key for c in find_citations(TEX)]  # never judged with the preamble as prose
    scan = scan_latex(TEX)
    in_macros = [k for c in scan.cites if scan.body is not None and c.start < scan.body[0] for k in c.cited]
    assert in_macros == ["robertson2009"]
    entries = {k: Paper(f"t:{k}", k) for k in [*MULTI, "robertson2009"]}
    problems = bib_problems(entries, [c.key for c in find_citations(TEX)] + in_macros, {}, {})
    assert not [p for p in problems if p.kind == UNCITED]  # none listed as "never cited"


def test_a_placeholder_in_a_preamble_macro_is_no_slot():
    from citefinder.text.slots import find_slots

    tex = ("\\documentclass{article}\n\\newcommand{\\todo}{\\citep{?} [CITATION]}\n\\begin{document}\n"
           "Real text about dense retrieval [CITATION].\n\\end{document}\n")
    slots = find_slots(tex, latex=True)
    assert [s.marker for s in slots] == ["[CITATION]"]
    assert "newcommand" not in slots[0].sentence and slots[0].sentence.startswith("Real text")
