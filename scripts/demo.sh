#!/usr/bin/env bash
# Installs what glmrt needs, builds it, and opens a chat with the bundled tiny
# model (a random checkpoint: its answers are random text). Extra arguments go
# to glmrt, e.g. `bash scripts/demo.sh --temperature 0`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec build/glmrt chat --profile configs/reference.yaml --model tests/fixtures/glm_tiny "$@"
