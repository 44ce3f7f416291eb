#!/usr/bin/env bash
# Per-stage quality on the shared benchmarks over a library (default: the 50k benchmark library),
# then the offline ablations and the confidence calibration. Results go to bench/out/.
# Usage: bash bench/run_quality.sh /path/to/lib50k
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:?library folder}
DATA=../shared/data
OUT=bench/out
mkdir -p "$OUT"
. .venv/bin/activate
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --split test --out $OUT/citeme-test.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --split train --out $OUT/citeme-train.json
citefinder eval --library "$LIB" --dataset $DATA/autoscholar-dev.jsonl --out $OUT/autoscholar.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --context-sentences 1 --out $OUT/citeme-context1.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --context-sentences 2 --out $OUT/citeme-context2.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --out $OUT/citeme-all.json
python bench/ablate.py fusion $OUT/citeme-all.json $OUT/autoscholar.json > $OUT/ablations.md
python bench/ablate.py context $OUT/citeme-all.json $OUT/citeme-context1.json $OUT/citeme-context2.json > $OUT/context.md
python bench/ablate.py confidence --calibrate $OUT/autoscholar.json $OUT/citeme-train.json --report $OUT/citeme-test.json > $OUT/confidence.md
python bench/ablate.py buckets --calibrate $OUT/autoscholar.json $OUT/citeme-train.json --report $OUT/citeme-test.json > $OUT/buckets.md
cat $OUT/ablations.md $OUT/context.md $OUT/confidence.md $OUT/buckets.md
