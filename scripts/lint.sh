#!/usr/bin/env bash
# Lint, type and architecture gate: ruff over the package and the tests, mypy over the package, and
# import-linter's contracts (layers, no import cycles; [tool.importlinter] in pyproject.toml).
# Part of the test command: scripts/test.sh runs it before pytest and stops on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] && . .venv/bin/activate
status=0
python -m ruff check citefinder tests || status=1
python -m mypy citefinder || status=1
lint-imports --no-cache || status=1
exit $status
