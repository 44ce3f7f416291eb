"""LaTeX read by a real tokenizer (pylatexenc), plain text read as plain text (issue 21): every
placeholder the user wrote is one slot, nothing in a comment or verbatim part is, and filling changes
the placeholders only."""

from __future__ import annotations

import pytest

from citefinder.retrieve.agents.draft import draft_context
from citefinder.retrieve.query.reformulate import reformulate
from citefinder.text.fill import fill_draft, unfilled_report
from citefinder.text.slots import find_slots
from latex_support import assert_only_placeholders_changed

HEAD = "\\documentclass{article}\n\\usepackage{natbib}\n\\begin{document}\n"
TAIL = "\n\\end{document}\n"


def test_plain_text_with_a_stray_cite_stays_plain_text():
    text = ("Yields rose 28% with irrigation \\cite{?}. Dry plots lost most of their harvest in the third year "
            "of the trial [CITATION].")
    slots = find_slots(text)
    assert [s.marker for s in slots] == ["\\cite{?}", "[CITATION]"]
    assert slots[0].sentence == "Yields rose 28% with irrigation [CITATION]."
    assert fill_draft(text, slots, {0: "a", 1: "b"}) == text.replace("\\cite{?}", "\\cite{a}").replace(
        "[CITATION]", "\\cite{b}")


@pytest.mark.parametrize(
    "hidden",
    [
        "\\begin{verbatim}\nExample: \\cite{?} and [CITATION]\n\\end{verbatim}",
        "Code \\verb|\\cite{?}| and \\verb+[CITATION]+ inline.",
        "\\begin{comment}\nAn old paragraph \\cite{?} [CITATION].\n\\end{comment}",
        "\\begin{lstlisting}[language=TeX]\n\\cite{?} % [CITATION]\n\\end{lstlisting}",
        "\\begin{minted}{latex}\n\\citep{TODO}\n\\end{minted}",
        "Inline \\lstinline|\\cite{?}| and \\mintinline{latex}{\\cite{?}} code.",
        "A line break ends here.\\\\% \\cite{?} [CITATION]",
        "\\iffalse\nA dropped sentence \\cite{?}.\n\\fi",
    ],
)
def test_nothing_in_comments_or_verbatim_is_a_slot(hidden):
    text = (HEAD + "Transformers use attention alone \\citep{?}.\n" + hidden + "\nBERT is bidirectional \\citep{?}."
            + TAIL)
    slots = find_slots(text)
    assert len(slots) == 2
    assert slots[0].sentence == "Transformers use attention alone [CITATION]."
    assert slots[1].sentence.endswith("BERT is bidirectional [CITATION].")
    filled = fill_draft(text, slots, {0: "vaswani", 1: "devlin"})
    assert hidden in filled and filled.count("?}") == hidden.count("?}")


def test_a_url_with_a_percent_sign_does_not_hide_the_slot_after_it():
    text = HEAD + "The data is at \\url{http://x.org/a%20b} and \\href{http://y.org/%7Ec}{here} \\cite{?}." + TAIL
    (slot,) = find_slots(text)
    assert slot.marker == "\\cite{?}"
    assert fill_draft(text, [slot], {0: "k"}).count("\\cite{k}") == 1


def test_optional_arguments_with_braces_and_key_lists_across_lines():
    text = HEAD + ("As shown before \\citep[see][Sec.~\\ref{sec:x}]{?}, and in two more \\citep{?, % first one\n"
                   "  ?} studies, also \\Citet*[p.~{3}]{TODO} said so." + TAIL)
    slots = find_slots(text)
    assert [s.command for s in slots] == ["\\citep", "\\citep", "\\citep", "\\Citet*"]
    assert slots[1].start == slots[2].start  # two placeholders of one command
    filled = fill_draft(text, slots, {0: "a", 1: "b", 2: "c", 3: "d"})
    became = assert_only_placeholders_changed(text, filled, slots)
    assert became == ["\\citep[see][Sec.~\\ref{sec:x}]{a}", "\\citep{b, % first one\n  c}", "\\Citet*[p.~{3}]{d}"]
    # the report of slots left unfilled names every one of them
    assert len(unfilled_report(slots, {})) == 4


def test_several_keys_for_one_slot():
    text = "\\section{A}\nDense retrieval \\citep{?} helps [CITATION] and [CITATION], [?] too."
    slots = find_slots(text)
    filled = fill_draft(text, slots, {0: ["a", "b"], 1: ("c",), 2: ["d", "c"], 3: "e"})
    assert filled == "\\section{A}\nDense retrieval \\citep{a,b} helps \\cite{c} and \\cite{d,c,e} too."
    # a key the command holds already is not written twice
    text = "\\section{A}\nX \\citep{a, ?}."
    assert fill_draft(text, find_slots(text), {0: ["a", "b"]}) == "\\section{A}\nX \\citep{a, b}."
    assert fill_draft(text, find_slots(text), {0: ["a"]}) == "\\section{A}\nX \\citep{a}."


def test_the_preamble_is_never_in_a_query():
    text = ("\\documentclass[11pt]{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{natbib}\n"
            "\\title{Retrieval for citations}\n\\begin{document}\n\\maketitle\n"
            "The Transformer relies on attention alone \\citep{?}. " + "More words about retrieval. " * 80 + TAIL)
    slot = find_slots(text)[0]
    query, _ = reformulate(slot)
    for part in (slot.context, slot.window, query.text, draft_context(text)):
        assert "article" not in part and "usepackage" not in part and "inputenc" not in part
        assert "document" not in part
    assert draft_context(text).startswith("Retrieval for citations")


def test_windows_line_endings_keep_paragraphs_and_bytes():
    text = HEAD.replace("\n", "\r\n") + "\\section{Intro}\r\nFirst claim \\cite{?}\r\n\r\nSecond claim [CITATION].\r\n"
    slots = find_slots(text, context_sentences=1)
    assert slots[0].sentence == "First claim [CITATION]"  # the blank line ends the paragraph
    assert slots[0].heading == "Intro"
    filled = fill_draft(text, slots, {0: "a", 1: "b"})
    assert filled == text.replace("\\cite{?}", "\\cite{a}").replace("[CITATION]", "\\cite{b}")
