#!/usr/bin/env bash
# Sets up .venv (scripts/setup.sh), then runs the whole suite: unit, slow and notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
.venv/bin/python -m pytest -q "$@"
if ls notebooks/*.ipynb >/dev/null 2>&1; then
  .venv/bin/python -m pytest -q --nbmake --nbmake-timeout=900 notebooks
fi
