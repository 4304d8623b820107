#!/usr/bin/env bash
# Rounding methods side by side on models/glm-demo: routed experts int4-k32,
# int3-k32 and int2-k16 with int8 dense, each converted without statistics,
# with `--importance STATS --method rtn` and with `--method gptq` (group
# scales chosen during the sweep, and before it), validated against the
# demo's f32 oracle: mean KL and same top-1 averaged over the ref.json cases,
# the experts' bits per weight as `convert --dry-run` reports them.
#   tools/convert-bench/method_table.sh BUILD_DIR SCRATCH_DIR STATS [FORMATS...]
# STATS: `glmrt calibrate` output with second moments (docs/convert.md).
set -euo pipefail
build=$1 scratch=$2 stats=$3
shift 3
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(int4-k32 int3-k32 int2-k16)
model=models/glm-demo
mkdir -p "$scratch"
export GLMRT_PLUGIN_PATH=$build/plugins OMP_WAIT_POLICY=passive
row() {  # LABEL EXPERTS CONVERT-FLAGS...
  local label=$1 experts=$2
  shift 2
  local dir="$scratch/c-$label"
  rm -rf "$dir"
  local start end
  start=$(date +%s.%N)
  "$build/glmrt" convert --from $model --to "$dir" --experts "$experts" --dense int8 "$@" > /dev/null
  end=$(date +%s.%N)
  local bits
  bits=$("$build/glmrt" convert --from $model --dry-run --experts "$experts" --dense int8 |
    awk '$1=="experts"{print $5}')
  cat > "$scratch/$label.yaml" <<YAML
plugins: {kernels: auto, io: io-buffered, draft: none}
precision: {dense: int8, experts: $experts, kv_cache: f32}
validate: {min_top1: 0, max_kl: 100, max_dlogit: 1000, min_margin: 1e-3, greedy_identical: false}
YAML
  "$build/glmrt" validate --profile "$scratch/$label.yaml" --model "$dir" --ref $model/ref.json \
    --json > "$scratch/$label.json" 2> /dev/null || true
  python3 - "$scratch/$label.json" "$label" "$bits" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["cases"]
kl = sum(c["mean_kl"] for c in cases) / len(cases)
top1 = sum(c["top1_agree"] for c in cases) / len(cases)
secs = float(sys.argv[5]) - float(sys.argv[4])
print(f"| {sys.argv[2]} | {float(sys.argv[3]):.3f} | {kl:.2e} | {100 * top1:.1f}% | {secs:.1f} s |")
PY
  rm -rf "$dir"
}
echo "| experts (dense int8), method | experts bits/weight | mean KL | same top-1 | convert |"
echo "| --- | --- | --- | --- | --- |"
for fmt in "${formats[@]}"; do
  row "$fmt" "$fmt"
  row "$fmt.rtn" "$fmt" --importance "$stats" --method rtn
  row "$fmt.gptq" "$fmt" --importance "$stats" --method gptq
  row "$fmt.gptq-before" "$fmt" --importance "$stats" --method gptq --gptq-scales before
done
