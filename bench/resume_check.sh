#!/usr/bin/env bash
# Issue 36: an arXiv-snapshot import stopped twice (Ctrl-C, then kill -9) and resumed, against one import in one go:
# the same papers in the end, and how many records each run read again.
# Usage: bash bench/resume_check.sh SNAPSHOT.json N_RECORDS OUTDIR [SECONDS]
#   (e.g. bench/out/papers-333k-arxiv.json 150000 bench/out/resume 30: each stopped run reads for SECONDS; choose
#   N so that SECONDS do not read it all)
set -uo pipefail
snap=$1; n=$2; out=$3; t=${4:-30}
rm -rf "$out"; mkdir -p "$out"
head -n "$n" "$snap" > "$out/arxiv-metadata-oai-snapshot.json"
cf() { python -m citefinder.cli.main "$@"; }
f="$out/arxiv-metadata-oai-snapshot.json"
cf --library "$out/once" library import "$f" --defer-embedding > "$out/once.log" 2>&1
# run 1: Ctrl-C (SIGINT) after $t s; run 2: kill -9 after $t s; run 3: to the end
timeout -s INT $t python -m citefinder.cli.main --library "$out/lib" library import "$f" --defer-embedding > "$out/run1.log" 2>&1
python -c "import json,sys; print('after Ctrl-C:', json.load(open(sys.argv[1]))['files'])" "$out/lib/dump-progress.json"
timeout -s KILL $t python -m citefinder.cli.main --library "$out/lib" library import "$f" --defer-embedding > "$out/run2.log" 2>&1
python -c "import json,sys; print('after kill -9:', json.load(open(sys.argv[1]))['files'])" "$out/lib/dump-progress.json"
cf --library "$out/lib" library import "$f" --defer-embedding > "$out/run3.log" 2>&1
for r in run1 run2 run3; do echo "== $r"; tr '\r' '\n' < "$out/$r.log" | grep -v "^reading" | grep -v "^\s*$"; done
python - "$out" <<'PY'
import sqlite3, sys
out = sys.argv[1]
ids = lambda lib: {r[0] for r in sqlite3.connect(f"{out}/{lib}/pending.sqlite").execute("select doc_id from pending")}
a, b = ids("once"), ids("lib")
print(f"one go: {len(a)} papers; stopped twice and resumed: {len(b)} papers; same doc ids: {a == b}")
PY
