#!/usr/bin/env bash
# Configures and builds glmrt into build/ (Release, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLMRT_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
