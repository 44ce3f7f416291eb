#!/usr/bin/env bash
# Create ./.venv and install CiteFinder from the lock files (idempotent; fast when up to date).
# Usage: scripts/setup.sh [dev]    -- "dev" adds the test, browser, lint and type-check tools.
# requirements.txt / requirements-dev.txt pin everything that citefinder[llm] / citefinder[dev] need
# (pyproject.toml declares the direct dependencies; scripts/lock.py writes the lock files).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
want=requirements.txt
[ "${1:-}" = dev ] && want=requirements-dev.txt
stamp=.venv/.citefinder-installed-$(cat requirements.txt requirements-dev.txt pyproject.toml | sha1sum | cut -c1-12)-$(basename "$want" .txt)
if [ -f "$stamp" ]; then exit 0; fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
# torch first: the CPU build. Anything that needs torch installed before it would pull CUDA wheels.
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -r "$want"
# pip builds the package in an isolated environment (PEP 517/660), so a venv without setuptools works too
python -m pip install --quiet --no-deps -e .
touch "$stamp"
