#!/usr/bin/env bash
# Installs what glmrt needs, builds it, and opens a chat with the bundled demo
# model (models/glm-demo: a small GLM-5-architecture model trained on the
# Brown Corpus; it continues what you write in 1960s American English, with
# more grammar than sense). Extra arguments go to glmrt, e.g.
# `bash scripts/demo.sh --temperature 0`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
echo "glmrt chat with models/glm-demo: type a sentence or two and press Enter (/help, /quit)" >&2
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
exec build/glmrt chat --profile configs/demo.yaml --no-thinking "$@"
