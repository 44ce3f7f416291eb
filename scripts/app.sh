#!/usr/bin/env bash
# Set up (first time) and start the CiteFinder app on the embedded default library (./library).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} LITELLM_LOCAL_MODEL_COST_MAP=${LITELLM_LOCAL_MODEL_COST_MAP:-True}
exec streamlit run app.py "$@"
