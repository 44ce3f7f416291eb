#!/usr/bin/env bash
# Set up (first time) and run the whole test suite, browser test included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
exec python -m pytest -q "$@"
