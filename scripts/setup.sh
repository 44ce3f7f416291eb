#!/usr/bin/env bash
# Create ./.venv and install CiteFinder from the lock files (idempotent; fast when up to date).
# Usage: scripts/setup.sh [dev]    -- "dev" adds the test, browser, lint and type-check tools.
# The lock files pin every package with the sha256 of its files (scripts/lock.py writes them from
# pyproject.toml's direct dependencies and a tested environment), so pip runs in hash-checking mode:
#   requirements-torch.txt  torch 2.13.0+cpu (the CPU build) and what only torch needs
#   requirements.txt        everything citefinder[llm] needs
#   requirements-dev.txt    + citefinder[dev] (tests, Playwright, ruff, mypy)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
want=requirements.txt
[ "${1:-}" = dev ] && want=requirements-dev.txt
stamp=.venv/.citefinder-installed-$(cat requirements-torch.txt requirements.txt requirements-dev.txt pyproject.toml | sha1sum | cut -c1-12)-$(basename "$want" .txt)
if [ -f "$stamp" ]; then exit 0; fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
# One resolution over torch (pinned to the +cpu build, so nothing pulls CUDA wheels) and the lock:
# every file is checked against its hash, and a package missing from the lock stops the install.
python -m pip install --quiet --require-hashes -r requirements-torch.txt -r "$want"
# pip builds the package in an isolated environment (PEP 517/660), so a venv without setuptools works too
python -m pip install --quiet --no-deps -e .
touch "$stamp"
