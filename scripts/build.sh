#!/usr/bin/env bash
# Configures and builds glmrt into build/ (Release, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Unity batches cut a cold build on 2 cores from ~9 to ~4 minutes.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLMRT_WERROR=ON -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
cmake --build build -j "$(nproc)"
