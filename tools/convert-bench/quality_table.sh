#!/usr/bin/env bash
# Converts models/glm-demo to each format of docs/convert.md's quality table,
# validates every container against the demo's f32 oracle (ref.json) and
# prints mean KL and same top-1 averaged over the cases, with the bits per
# weight `convert --dry-run` reports.
#   tools/convert-bench/quality_table.sh [BUILD_DIR] [SCRATCH_DIR] [IMPORTANCE_FILE]
# With IMPORTANCE_FILE (from `glmrt calibrate`), only the per-group rows are
# printed, each without and with `--importance IMPORTANCE_FILE`.
# With QUALITY_TABLE=low-bit in the environment, the rows of the 3-bit and
# two-level formats beside int4-g64 (docs/convert.md, "Low-bit formats").
set -euo pipefail
build=${1:-build}
scratch=${2:-$(mktemp -d)}
importance=${3:-}
model=models/glm-demo
export GLMRT_PLUGIN_PATH=$build/plugins OMP_WAIT_POLICY=passive
profile() {  # NAME DENSE EXPERTS
  cat > "$scratch/$1.yaml" <<YAML
plugins: {kernels: auto, io: io-buffered, draft: none}
precision: {dense: $2, experts: $3, kv_cache: f32}
validate: {min_top1: 0, max_kl: 100, max_dlogit: 1000, min_margin: 1e-3, greedy_identical: false}
YAML
}
row() {  # LABEL DENSE-PROFILE EXPERTS-PROFILE CONVERT-FLAGS...
  local label=$1 dense=$2 experts=$3
  shift 3
  local dir="$scratch/c-$label"
  rm -rf "$dir"
  "$build/glmrt" convert --from $model --to "$dir" "$@" > /dev/null
  local bits
  bits=$("$build/glmrt" convert --from $model --dry-run "$@" | awk '$1=="total"{print $5}')
  profile "$label" "$dense" "$experts"
  "$build/glmrt" validate --profile "$scratch/$label.yaml" --model "$dir" --ref $model/ref.json \
    --json > "$scratch/$label.json" || true
  python3 - "$scratch/$label.json" "$label" "$bits" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["cases"]
kl = sum(c["mean_kl"] for c in cases) / len(cases)
top1 = sum(c["top1_agree"] for c in cases) / len(cases)
print(f"| {sys.argv[2]} | {float(sys.argv[3]):.3f} | {kl:.2e} | {100 * top1:.1f}% |")
PY
}
echo "| format | bits/weight (all tensors) | mean KL | same top-1 |"
echo "| --- | --- | --- | --- |"
if [ -n "$importance" ]; then
  for spec in "experts-int4-g64.dense-int8 int8 int4-g64 --experts int4-g64 --dense int8" \
    "all-int4-g64 int4-g64 int4-g64 --experts int4-g64 --dense int4-g64" \
    "all-int2-g32 int2-g32 int2-g32 --experts int2-g32 --dense int2-g32"; do
    set -- $spec
    label=$1
    shift
    row "$label" "$@"
    row "$label.importance" "$@" --importance "$importance"
  done
  exit 0
fi
if [ "${QUALITY_TABLE:-}" = low-bit ]; then
  for all in int4-g64 int4-k32 int3-g64 int3-k32; do
    row "all-$all" "$all" "$all" --experts "$all" --dense "$all" --embed int8 --lm-head int8
  done
  for experts in int4-g64 int3-g128 int3-g64 int3-k32 int2-g32 int2-k16; do
    row "experts-$experts.dense-int8" int8 "$experts" --experts "$experts" --dense int8
  done
  exit 0
fi
row f32 f32 f32 --experts f32 --dense f32 --embed f32
row int8-all int8 int8 --experts int8 --dense int8 --embed int8
row experts-int4-g64.dense-int8 int8 int4-g64 --experts int4-g64 --dense int8
row experts-int4-rows.dense-int8 int8 int4 --experts int4 --dense int8
row all-int4-g64 int4-g64 int4-g64 --experts int4-g64 --dense int4-g64
row all-int4-g32 int4-g32 int4-g32 --experts int4-g32 --dense int4-g32
row all-int4-rows int4 int4 --experts int4 --dense int4
row experts-int2-g32.dense-int8 int8 int2-g32 --experts int2-g32 --dense int8
row all-int2-g32 int2-g32 int2-g32 --experts int2-g32 --dense int2-g32
