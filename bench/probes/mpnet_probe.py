"""Backs bench/RESULTS.md, section "Tried on the training part and dropped (2026-11-22, second session; machine busy,
load 6-8)".

Probe: would an mpnet agent (exact cosine with all-mpnet-base-v2 over a small library) help?

    python bench/probes/mpnet_probe.py bench/out/drafts-train.json bench/out/drafts-train+mpnet.json

Reads a drafts_eval output, embeds every paper of each draft's library with mpnet (cached under
bench/out/mpnet-cache/), embeds each slot's dense query, and writes a copy of the output with an
extra "mpnet" ranked list per slot, so ``bench/tune.py`` can fuse and ablate it offline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from probe_support import add_list  # noqa: E402


def main() -> int:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    from citefinder.config import offline_environment
    from citefinder.library.encoders.embedder import MPNET, Embedder

    offline_environment()
    result = json.loads(src.read_text())
    mp = Embedder(MPNET, 256, 16)
    cache = ROOT / "bench/out/mpnet-cache"
    cache.mkdir(parents=True, exist_ok=True)
    add_list(result, mp, "mpnet", cache)
    dst.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
