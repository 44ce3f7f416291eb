"""escape_markdown / safe_url: untrusted metadata renders as its own text through a real Markdown parser."""

from __future__ import annotations

import html

import pytest
from markdown_it import MarkdownIt

from citefinder.ui.markdown import WORD_JOINER, escape_markdown, link, safe_url

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "![pic](http://evil.example/p.png)",
    "**bold** _it_ `code` ~~strike~~",
    "# Heading\n- item\n1. one\n> quote",
    "$E = mc^2$ and $$x$$",
    ":red[colour] :material/home: :smile:",
    "<https://evil.example> and www.evil.example",
    "a\\*b back\\slash &amp; &lt;tag&gt;",
    "Title ===\n===",
    "    indented code",
    "| a | b |\n|---|---|",
    "ok [^1] footnote",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_as_exactly_that_text(text):
    md = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable(["table", "strikethrough"])
    rendered = md.render(escape_markdown(text)).strip().replace(WORD_JOINER, "")
    flat = " ".join(text.split())
    assert rendered == f"<p>{html.escape(flat, quote=False)}</p>"


@pytest.mark.parametrize("text", ["www.evil.example", "see https://evil.example/x", "me@evil.example"])
def test_bare_urls_get_a_word_joiner_against_gfm_autolinks(text):
    escaped = escape_markdown(text)
    assert WORD_JOINER in escaped
    assert escaped.replace(WORD_JOINER, "").replace("\\", "") == text


def test_whitespace_collapses_to_one_line():
    assert escape_markdown("  a\n\n  b\t c ") == "a b c"
    assert escape_markdown(" a ", strip=False) == " a "
    assert escape_markdown(None) == ""


def test_plain_words_are_untouched():
    assert escape_markdown("Attention Is All You Need") == "Attention Is All You Need"
    assert escape_markdown("BERT: pre-training") == "BERT\\: pre\\-training"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://arxiv.org/abs/1706.03762", "https://arxiv.org/abs/1706.03762"),
        ("http://doi.org/10.1002/(SICI)1097", "http://doi.org/10.1002/%28SICI%291097"),
        ("javascript:alert(1)", None),
        ("JaVaScRiPt:alert(1)", None),
        ("data:text/html,<script>", None),
        ("https://x.org/a b", None),
        ("https://", None),
        ("//evil.example/x", None),
        ("", None),
        (None, None),
    ],
)
def test_safe_url_keeps_only_http_links(url, expected):
    assert safe_url(url) == expected


def test_link_drops_unsafe_targets_and_escapes_labels():
    assert link("a [b]", "https://x.org") == "[a \\[b\\]](https://x.org)"
    assert link("open", "javascript:alert(1)") == "open"


# --- messages written for people (issue 37, item 10) ----------------------------------------------------------

def test_a_message_keeps_its_commands_and_italics_and_escapes_the_rest() -> None:
    from citefinder.ui.markdown import message_markdown

    text = message_markdown("refs.bib is not a PDF: use *Pair with your .bib*, or `citefinder library import`.")
    assert "*Pair with your \\.bib*" in text and "`citefinder library import`" in text
    assert text.startswith("refs\\.bib is not a PDF\\:")
    # nothing from a file name can open a link, HTML or a directive
    hostile = message_markdown("[x](javascript:alert(1)) <img src=x> :red[boom] a.pdf")
    assert "\\[x\\]\\(javascript" in hostile and "\\<img" in hostile and "\\:red\\[boom\\]" in hostile


def test_a_code_span_shows_a_path_as_it_is() -> None:
    from citefinder.ui.markdown import code_span

    assert code_span("/tmp/lib/paired") == "`/tmp/lib/paired`"  # no backslash before each slash
    assert code_span("a`b") == "``a`b``" and code_span("`x") == "`` `x ``"


def test_a_reason_becomes_a_sentence() -> None:
    from citefinder.ui.markdown import as_sentence

    assert as_sentence("no records found in refs.bib: the file is empty") == \
        "No records found in refs.bib: the file is empty."
    assert as_sentence("Done.") == "Done." and as_sentence("") == ""
    assert as_sentence("refs.bib is a ZIP archive") == "refs.bib is a ZIP archive."  # a file name as written
