"""The misbehaviour matrix of issue 42 item 8: `library enrich --from <service>` and `fill --literature <service>`
against each of the four services misbehaving on every call (the loopback fake, tests/online_server.py), each run a
fresh copy of one project (refs.bib, its library beside it, a two-slot draft). A run passes when it ends within
120 s, exits 0 or with one `error: <service>: ...` line, prints no traceback and no `unexpected ...Error`, says a
failed literature search at most once, and leaves the .bib and the library's papers as they were.

    python bench/online_misbehave.py --code /path/to/checkout [--jobs 3] [--out bench/out/misbehave.json]

``--code``: the checkout whose `citefinder` the runs use (PYTHONPATH), so main can be measured with the fake of
this branch."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from online_server import MISBEHAVIOURS, SERVICES, Catalog, FakeScholar, closed_port, read_records  # noqa: E402

LIMIT_S = 120.0
CLI = [sys.executable, "-c", "import sys; from citefinder.cli.main import main; sys.exit(main(sys.argv[1:]))"]
DRAFT = ("\\documentclass{article}\n\\begin{document}\n"
         "The Transformer relies on self-attention instead of recurrence for sequence transduction \\citep{?}.\n"
         "Deep convolutional neural networks classify ImageNet \\cite{?}.\n\\bibliography{refs}\n\\end{document}\n")


def papers(folder: Path) -> list[tuple]:
    from citefinder.config import Settings
    from citefinder.library.store import Library

    lib = Library.open(Settings(library=folder))
    return sorted((p.key, p.abstract, tuple(p.ids), tuple(p.provenance)) for p in lib.iter_papers())


def env_for(code: Path, cache: Path, urls: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITEFINDER_")}
    env.update({"PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True", "CITEFINDER_CACHE": str(cache),
                "CITEFINDER_ONLINE_INTERVAL_S": "0", "CITEFINDER_ONLINE_TIMEOUT_S": "5",
                "CITEFINDER_ONLINE_RETRIES": "2", "CITEFINDER_ONLINE_BACKOFF_S": "0.2",
                "CITEFINDER_ONLINE_DEADLINE_S": "10", "CITEFINDER_LEARN_FROM_PICKS": "false",
                "CITEFINDER_LIBRARY": str(cache.parent / "no-default-library")})
    env.update({f"CITEFINDER_{k.upper()}": v for k, v in urls.items()})
    return env


def template(work: Path, code: Path, urls: dict[str, str]) -> Path:
    """refs.bib with its library made and synced (an enrichment from a closed port: the library, nothing gained)."""
    project = work / "template"
    project.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "online-refs.bib", project / "refs.bib")
    (project / "paper.tex").write_text(DRAFT, encoding="utf-8")
    env = env_for(code, work / "cache", {**urls, "crossref_url": f"http://127.0.0.1:{closed_port()}/crossref"})
    subprocess.run([*CLI, "library", "enrich", "--from", "crossref", "--bib",
                    str(project / "refs.bib")], env=env, cwd=project, capture_output=True, timeout=600)
    assert (project / ".refs.citefinder").is_dir(), "the template's library was made"
    return project


def one(work: Path, code: Path, urls: dict[str, str], project: Path, before: list[tuple], command: str,
        service: str, mode: str) -> dict:
    here = work / f"{command}-{service}-{mode}"
    shutil.copytree(project, here)
    bib = (here / "refs.bib").read_bytes()
    args = (["library", "enrich", "--from", service, "--bib", str(here / "refs.bib")] if command == "enrich" else
            ["fill", str(here / "paper.tex"), "--literature", service, "--literature-when", "always"])
    env = env_for(code, here / "cache", urls)
    start = time.monotonic()
    try:
        run = subprocess.run([*CLI, *args], env=env, cwd=here, capture_output=True,
                             text=True, timeout=LIMIT_S)
        code_, out, err = run.returncode, run.stdout, run.stderr
    except subprocess.TimeoutExpired as e:
        code_, out, err = None, str(e.stdout or ""), str(e.stderr or "")
    seconds = time.monotonic() - start
    lines = [x for x in (out if code_ == 0 else err).splitlines() if x.strip()]
    last = lines[-1] if lines else ""
    said = sum("could not be searched" in x for x in err.splitlines())
    problems = []
    if code_ is None:
        problems.append(f"still running after {LIMIT_S:.0f} s")
    if "Traceback" in err or "unexpected " in err:
        problems.append("traceback/unexpected")
    if code_ not in (0, None) and not any(x.startswith(f"error: {service}: ") for x in err.splitlines()):
        problems.append(f"exit {code_} without a clear line")
    if said > 1:
        problems.append(f"failure said {said} times")
    if (here / "refs.bib").read_bytes() != bib:
        problems.append(".bib changed")
    if code_ is not None and papers(here / ".refs.citefinder") != before:
        problems.append("library changed")
    return {"command": command, "service": service, "mode": mode, "exit": code_, "seconds": round(seconds, 1),
            "last": last[-160:], "said": said, "ok": not problems, "problems": problems}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "online_misbehave.json")
    ap.add_argument("--only", default="", help="command:service:mode,... (default: all)")
    args = ap.parse_args()
    fake = FakeScholar(Catalog(list(read_records(ROOT / "tests" / "data" / "online-papers.jsonl"))))
    work = Path(tempfile.mkdtemp(prefix="misbehave-"))
    try:
        project = template(work, args.code.resolve(), fake.urls())
        before = papers(project / ".refs.citefinder")
        cases = [(c, s, m) for m in MISBEHAVIOURS for s in SERVICES for c in ("enrich", "fill")]
        if args.only:
            cases = [tuple(x.split(":")) for x in args.only.split(",")]  # type: ignore[misc]
        fake.modes = {}

        def run(case: tuple) -> dict:
            command, service, mode = case
            return one(work, args.code.resolve(), fake.urls(), project, before, command, service, mode)

        # every service misbehaves at once, each in its own way per run: the fake's mode is set per service, and
        # runs of one service never overlap (the jobs take the services in turn)
        results: list[dict] = []
        by_service = {s: [c for c in cases if c[1] == s] for s in SERVICES}

        def lane(service: str) -> list[dict]:
            done = []
            for case in by_service[service]:
                fake.modes[service] = case[2]
                done.append(run(case))
                print(json.dumps(done[-1]), flush=True)
            return done

        with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(SERVICES)))) as pool:
            for chunk in pool.map(lane, SERVICES):
                results.extend(chunk)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
        failed = [r for r in results if not r["ok"]]
        longest = max(r["seconds"] for r in results)
        print(f"{len(results) - len(failed)} of {len(results)} runs pass; longest {longest} s")
        return 0
    finally:
        fake.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
