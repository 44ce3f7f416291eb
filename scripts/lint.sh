#!/usr/bin/env bash
# Lint and type gate: ruff over the package and the tests, mypy over the package (config in pyproject.toml).
# Not yet part of scripts/test.sh: it is enabled once the open branches are merged and the findings fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] && . .venv/bin/activate
status=0
python -m ruff check citefinder tests || status=1
python -m mypy citefinder || status=1
exit $status
