#!/usr/bin/env bash
# Set up (first time) and start the CiteFinder app on the embedded default library (./library).
# It listens on 127.0.0.1 only (.streamlit/config.toml): other machines cannot reach it. Arguments go to
# streamlit (e.g. --server.port 8600); to share it with a lab, read README "Sharing with a lab" first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} LITELLM_LOCAL_MODEL_COST_MAP=${LITELLM_LOCAL_MODEL_COST_MAP:-True}
exec streamlit run app.py "$@"
