#!/usr/bin/env bash
# Sets up .venv (scripts/setup.sh), then runs the whole suite: unit, slow, notebooks, and the tests
# with a real model (marked `model`), whose packages build in the background meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
bash scripts/install_model_tests.sh > .venv/model-tests-install.log 2>&1 &
model_install=$!
.venv/bin/python -m pytest -q "$@"
if ls notebooks/*.ipynb >/dev/null 2>&1; then
  .venv/bin/python -m pytest -q --nbmake --nbmake-timeout=900 notebooks
fi
if ! wait "$model_install"; then
  cat .venv/model-tests-install.log
  echo "installing the model-tests extra failed (log above)" >&2
  exit 1
fi
tail -n 1 .venv/model-tests-install.log
.venv/bin/python -m pytest -q -m model tests/model
