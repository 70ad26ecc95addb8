#!/usr/bin/env bash
# Creates .venv and installs the project with everything its tests need, offline-safe.
# torch is pinned first: the CPU build of 2.13.0 lies on this machine's disk, while an
# unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import torch, minirag_core, llama_index_minirag, langchain_minirag; assert torch.__version__.startswith('2.13.0'), torch.__version__"
