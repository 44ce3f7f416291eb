"""Fill every drafts-dev paper as a LaTeX file with the real command line, and check the result.

    python bench/fill_tex_eval.py [--part all] [--work bench/out/fill-tex]

Each paper's draft.txt becomes main.tex with every [CITATION] written \\citep{?} and its refs.bib beside
it; ``citefinder fill main.tex --bib refs.bib`` runs end to end (library import included, kept between
runs), and the script checks that main.cited.tex differs from main.tex only at the placeholders and that
the fill found as many slots as the draft has markers. Prints one line per paper and the totals.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared/data/drafts-dev"
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=("train", "test", "all"), default="all")
    p.add_argument("--work", type=Path, default=ROOT / "bench/out/fill-tex")
    args = p.parse_args()
    from latex_support import assert_only_placeholders_changed

    from citefinder.cli.main import main as cli
    from citefinder.config import offline_environment
    from citefinder.text.slots import find_slots

    offline_environment()
    split = json.loads((ROOT / "bench/drafts_split.json").read_text())
    papers = sorted(split["train"] + split["test"]) if args.part == "all" else split[args.part]
    totals = {"papers": 0, "slots": 0, "markers": 0, "filled": 0, "identical_outside": 0}
    for name in papers:
        folder = args.work / name
        folder.mkdir(parents=True, exist_ok=True)
        text = (DATA / name / "draft.txt").read_text(encoding="utf-8")
        markers = text.count("[CITATION]")
        tex = re.sub(r"\[CITATION\]", lambda m: "\\citep{?}", text)
        (folder / "main.tex").write_text(tex, encoding="utf-8")
        shutil.copy(DATA / name / "refs.bib", folder / "refs.bib")
        out = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli(["fill", str(folder / "main.tex"), "--bib", str(folder / "refs.bib")])
        elapsed = time.perf_counter() - t0
        filled = (folder / "main.cited.tex").read_text(encoding="utf-8")
        slots = find_slots(tex, latex=True)
        try:
            became = assert_only_placeholders_changed(tex, filled, slots)
            same = True
        except AssertionError:
            became, same = [], False
        n_filled = sum(1 for b in became if "?" not in b)
        summary = re.search(r"(\d+) of (\d+) slots filled", out.getvalue())
        reported = int(summary.group(2)) if summary else -1
        print(f"{name}: exit {code}, {markers} markers, {len(slots)} slots ({reported} in the summary), "
              f"{n_filled} filled, only placeholders changed: {same}, {elapsed:.1f} s", flush=True)
        totals["papers"] += 1
        totals["markers"] += markers
        totals["slots"] += len(slots) if reported == len(slots) else 0
        totals["filled"] += n_filled
        totals["identical_outside"] += int(same)
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
