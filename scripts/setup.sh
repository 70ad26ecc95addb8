#!/usr/bin/env bash
# Creates .venv and installs the project with everything its tests need, offline-safe.
# torch comes first, the CPU build from PyTorch's CPU index (on this project's machines the same
# wheel lies on disk): installed by the project's requirements instead, torch comes from PyPI with
# CUDA packages (nvidia-*, triton; several GB) that a CPU-only machine never uses. --retries 0: where
# that index is out of reach, pip falls back to the local wheel at once instead of retrying for minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q --retries 0 "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu 2>&1 | grep -v "^WARNING: Location" || true
# setuptools says "Editable installation ... folders with the same name as your package" on every run for a
# layout of two package roots (shared/ and .): informational, and nothing here to act on
PYTHONWARNINGS="ignore:Editable installation:UserWarning" .venv/bin/python -m pip install -q -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import torch, minirag_core, llama_index_minirag, langchain_minirag; assert torch.__version__.startswith('2.13.0'), torch.__version__"
