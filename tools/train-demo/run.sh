#!/usr/bin/env bash
# The whole demo-model pipeline, from the npm corpus package to models/glm-demo:
#   bash tools/train-demo/run.sh            # ~55 min on 2 busy cores (training ~50 of them)
# Stages (each re-runnable alone, see README.md): corpus -> tokenizer -> train -> export ->
# ref.json -> evaluation. Intermediate files go to tools/train-demo/work/ (not committed).
# Set OUT=/some/dir to write the model elsewhere (default models/glm-demo).
set -euo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-../../models/glm-demo}
PY=/usr/bin/python3  # Debian's python3, where python3-torch lives

if ! $PY -c "import torch, numpy" 2>/dev/null || ! command -v npm >/dev/null; then
  apt-get update && apt-get install -y python3-torch python3-numpy npm
fi
# Debian's torch calls the system BLAS; the reference libblas makes training ~4x slower.
if ! ls /usr/lib/x86_64-linux-gnu/libopenblas*.so* >/dev/null 2>&1; then
  apt-get install -y libopenblas0-pthread
fi
export OMP_WAIT_POLICY=passive

$PY prepare_corpus.py --out work/corpus
$PY train_tokenizer.py --work work
$PY check_glm_tiny.py                      # the float64 forward == transformers on glm_tiny
$PY train.py --work work                   # seeded: 400 steps x 8 x 256 tokens
$PY export.py --work work --out "$OUT"
$PY make_ref.py --work work --model "$OUT"
$PY evaluate.py --work work --model "$OUT" --out work/eval.json
if [ -x ../../build/glmrt ]; then
  $PY check_tokenizer.py --work work --tokenizer "$OUT/tokenizer.json"
fi
