#!/usr/bin/env bash
# Per-stage quality: real drafts (drafts-dev, train and test parts, each against its own .bib) and the
# shared benchmarks over a 50k library; then the tuning (training data only), ablations and the
# confidence report on the test parts. Results go to bench/out/.
# Usage: bash bench/run_quality.sh /path/to/lib50k     (a library holding ../shared/data/papers-50k.jsonl.gz)
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${1:?library folder}
DATA=../shared/data
OUT=bench/out
mkdir -p "$OUT"
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
python bench/drafts_eval.py --part train --out $OUT/drafts-train.json
python bench/drafts_eval.py --part test --out $OUT/drafts-test.json
# the same drafts from the .bib as the authors wrote it (most entries without an abstract)
python bench/drafts_eval.py --part train --bib refs.bib --out $OUT/drafts-train-plain.json
python bench/drafts_eval.py --part test --bib refs.bib --out $OUT/drafts-test-plain.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --split train --out $OUT/citeme-train.json
citefinder eval --library "$LIB" --dataset $DATA/citeme.jsonl --split test --out $OUT/citeme-test.json
citefinder eval --library "$LIB" --dataset $DATA/autoscholar-dev.jsonl --out $OUT/autoscholar.json
# tuning reads training data only (writes citefinder/data/fusion.json and confidence.json):
#   python bench/tune.py fusion $OUT/drafts-train.json
#   python bench/tune.py confidence $OUT/drafts-train.json
python bench/tune.py ablate $OUT/drafts-test.json $OUT/drafts-test-plain.json $OUT/citeme-test.json $OUT/autoscholar.json > $OUT/ablations.md
python bench/tune.py report --test $OUT/drafts-test.json $OUT/drafts-test-plain.json $OUT/citeme-test.json > $OUT/confidence.md
cat $OUT/ablations.md $OUT/confidence.md
