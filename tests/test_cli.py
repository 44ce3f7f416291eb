"""The ``citefinder`` command driven through ``main``: library import/search/remove, find and fill on real
libraries (Chroma on disk, bm25s, MiniLM), global options before or after the command, quiet logging."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest

from citefinder.cli.main import build_parser, main

DATA = Path(__file__).parent / "data"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- parsing: global options before or after the command --------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["--library", "L", "--embedder", "mpnet", "-v", "fill", "d.pdf", "-o", "x.bib"],
        ["fill", "d.pdf", "-o", "x.bib", "--library", "L", "--embedder", "mpnet", "-v"],
        ["--library", "L", "fill", "-v", "d.pdf", "--embedder", "mpnet", "-o", "x.bib"],
    ],
)
def test_global_options_before_or_after_the_command(argv):
    args = build_parser().parse_args(argv)
    assert (args.command, args.library, args.embedder, args.verbose) == ("fill", "L", "mpnet", 1)


def test_an_option_after_the_command_wins_and_absent_ones_keep_their_defaults():
    parser = build_parser()
    args = parser.parse_args(["--library", "A", "library", "search", "q", "--library", "B"])
    assert (args.library, args.library_command, args.query) == ("B", "search", "q")
    args = parser.parse_args(["library", "stats"])
    assert (args.library, args.chroma_host, args.llm_model, args.verbose) == (None, None, None, 0)
    args = parser.parse_args(["--chroma-host", "127.0.0.1:8000", "-vv", "reranker", "list"])
    assert (args.chroma_host, args.verbose, args.reranker_command) == ("127.0.0.1:8000", 2, "list")


def test_ctrl_c_while_the_options_are_read_is_one_line_and_130(monkeypatch, capsys):
    import citefinder.cli.main as cli_main

    def interrupted() -> None:  # the parser imports a few modules: a Ctrl-C in the first second lands there
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "build_parser", interrupted)
    assert main(["library", "stats"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def test_help_names_the_global_options(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for option in ("--library DIR", "--chroma-host", "--embedder", "--llm-model", "-v, --verbose"):
        assert option in out


# --- the library commands ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_records(sampled_records) -> list[dict]:
    return sampled_records[0][:12]


def test_library_import_search_remove(tmp_path, tiny_records, capsys):
    lib = tmp_path / "lib"
    src = write_jsonl(tmp_path / "tiny.jsonl", tiny_records)
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"doc_id": "x:1", "title": "   "}])

    # global option before the command
    assert main(["--library", str(lib), "library", "import", str(src), str(bad)]) == 0
    out, err = capsys.readouterr()
    assert f"added {len(tiny_records)}, duplicates skipped 0, failures 1" in out
    assert f"library now holds {len(tiny_records)} papers" in out
    assert "failed: bad.jsonl" in out or "failed: x:1" in out
    assert f"/{len(tiny_records) + 1}" in err  # the progress bar knew its total from the start
    # a bar without a total reads "0papers [..."; a rate such as "17.20papers/s" is fine
    assert not re.search(r"(?<![\d.])0 ?papers(?!/s)", err)

    # again: every paper is a duplicate
    assert main(["library", "import", str(src), "--library", str(lib)]) == 0
    assert f"added 0, duplicates skipped {len(tiny_records)}" in capsys.readouterr().out

    target = tiny_records[4]
    assert main(["library", "search", target["title"], "-k", "3", "--library", str(lib)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].lstrip().startswith("1.") and target["title"] in lines[0] and f"[{target['doc_id']}]" in lines[0]

    assert main(["library", "search", target["title"], "--json", "--library", str(lib)]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["rank"] == 1 and hits[0]["doc_id"] == target["doc_id"] and hits[0]["title"] == target["title"]

    assert main(["--library", str(lib), "library", "remove", target["doc_id"], "no-such-id"]) == 1
    assert f"removed 1 of 2; library now holds {len(tiny_records) - 1} papers" in capsys.readouterr().out
    assert main(["library", "search", target["title"], "--json", "-k", "20", "--library", str(lib)]) == 0
    assert target["doc_id"] not in {h["doc_id"] for h in json.loads(capsys.readouterr().out)}

    assert main(["library", "stats", "--json", "--library", str(lib)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["papers"], stats["bm25_documents"]) == (len(tiny_records) - 1, len(tiny_records) - 1)


def test_search_of_an_empty_library_says_how_to_fill_it(tmp_path, capsys):
    assert main(["library", "search", "anything", "--library", str(tmp_path / "empty")]) == 0
    assert "the library is empty: citefinder library import FILE" in capsys.readouterr().out


def test_import_is_quiet_by_default_and_logs_with_v(tmp_path, tiny_records, caplog):
    """A real process: no library debug lines (bm25s logs at DEBUG on its own) without -v. With -v (here,
    in this process: a second process would only repeat the model loading): ours, not other libraries'."""
    from citefinder.cli.options import configure_logging

    src = write_jsonl(tmp_path / "tiny.jsonl", tiny_records[:3])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "citefinder.cli.main", "library", "import", str(src),
           "--library", str(tmp_path / "lib")]
    quiet = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert "added 3," in quiet.stdout
    assert "DEBUG" not in quiet.stderr and "INFO" not in quiet.stderr
    assert "Loading weights" not in quiet.stderr  # transformers' progress bars are off too
    assert "3/3" in quiet.stderr

    caplog.clear()
    try:
        assert main(["library", "import", str(src), "-v", "--library", str(tmp_path / "lib2")]) == 0
        loud = [(r.name, r.levelno) for r in caplog.records]
    finally:
        configure_logging(0)
    assert any(name.startswith("citefinder.") and level in (logging.DEBUG, logging.INFO) for name, level in loud)
    assert not [name for name, level in loud if not name.startswith("citefinder") and level < logging.INFO]  # -vv


def test_verbose_sets_levels_and_quiet_resets_them(tmp_path):
    main(["-v", "library", "stats", "--library", str(tmp_path / "lib")])
    assert logging.getLogger("citefinder").getEffectiveLevel() == logging.DEBUG
    assert logging.getLogger("bm25s").level == logging.WARNING
    main(["library", "stats", "--library", str(tmp_path / "lib")])
    assert logging.getLogger("citefinder").getEffectiveLevel() == logging.WARNING
    assert logging.getLogger("bm25s").level == logging.WARNING


# --- find and fill on the small library ----------------------------------------------------------------


def test_find_prints_slots_numbered_from_one_and_json_keeps_the_0_based_index(small_library, capsys):
    paper = small_library.records[5]
    lib = str(small_library.settings.library)
    text = f"Background sentence without a marker. The method of {paper['title']} is what we build on [CITATION]."
    assert main(["--library", lib, "--reranker", "none", "find", text, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Slot 1: The method of ")
    assert "Slot 0" not in out
    assert "Top candidates" in out and "Trace:" in out
    table = [line for line in out[out.index("Top candidates"):out.index("Trace:")].splitlines() if line.strip()]
    assert len(table) == 1 + 1 + 3 and table[2].split()[0] == "1"  # header, column names, top 3 from 1

    assert main(["find", text, "--json", "--library", lib, "--reranker", "none"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert result["slot"]["index"] == 0  # JSON: 0-based order in the text
    assert result["candidates"][0]["paper"]["doc_id"] == paper["doc_id"]  # named by its title: found first


def test_fill_writes_bib_filled_draft_and_json(small_library, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "0")  # always pick the top candidate
    a, b = small_library.citeme[0], small_library.citeme[1]
    draft = tmp_path / "draft.txt"
    draft.write_text(f"# Intro\n\n{a['text']}\n\n{b['text']}\n", encoding="utf-8")
    n_slots = draft.read_text().count("[CITATION]")
    bib, filled, js = tmp_path / "refs.bib", tmp_path / "filled.tex", tmp_path / "results.json"
    lib = str(small_library.settings.library)

    code = main(["fill", str(draft), "-o", str(bib), "--filled", str(filled), "--json", str(js),
                 "--library", lib, "--reranker", "none"])
    assert code == 0
    out, err = capsys.readouterr()
    assert f"{n_slots} of {n_slots} slots filled" in out
    assert f"filled draft written to {filled}" in out
    assert f"{n_slots}/{n_slots}" in err  # progress over the slots, with its total

    entries = bibtexparser.parse_string(bib.read_text()).entries
    keys = {e.key for e in entries}
    assert 1 <= len(entries) <= n_slots
    text = filled.read_text()
    assert "[CITATION]" not in text and all(f"\\cite{{{k}}}" in text for k in keys)
    results = json.loads(js.read_text())
    assert [r["slot"]["index"] for r in results] == list(range(n_slots))
    assert all(r["selection"]["status"] == "found" for r in results)


def test_fill_reports_slots_left_unfilled_numbered_from_one(small_library, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CITEFINDER_CONFIDENCE_THRESHOLD", "1.0")  # never confident enough: nothing filled
    draft = tmp_path / "draft.md"
    draft.write_text("Transformers replaced recurrence [CITATION]. Nothing else.", encoding="utf-8")
    assert main(["--library", str(small_library.settings.library), "--reranker", "none",
                 "fill", str(draft), "-o", str(tmp_path / "refs.bib")]) == 0
    out = capsys.readouterr().out
    assert "0 of 1 slots filled; 0 entries written" in out
    assert "Slot 1 left as [CITATION]" in out


def test_fill_without_slots_is_an_input_error(small_library, tmp_path, capsys):
    draft = tmp_path / "draft.txt"
    draft.write_text("A draft without any citation marker.", encoding="utf-8")
    lib = str(small_library.settings.library)
    code = main(["fill", str(draft), "-o", str(tmp_path / "refs.bib"), "--library", lib])
    assert code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and "No citation slot found" in last and "[CITATION]" in last
    assert not (tmp_path / "refs.bib").exists()
