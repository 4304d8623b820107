#!/usr/bin/env bash
# Issue 25's three quality targets on any checkpoint with a ref.json: every
# matrix at ~4.4 bits (embeddings and lm_head int8), int8 dense + ~3.4-bit
# experts, int8 dense + ~2.6-bit experts; each format without statistics,
# with `--importance STATS --method rtn` and with `--method gptq`, validated
# against the checkpoint's own f32 oracle (mean KL and same top-1 averaged
# over its ref.json cases, worst case's KL beside them).
#   tools/convert-bench/targets_table.sh BUILD_DIR SCRATCH_DIR MODEL_DIR STATS [ROWS...]
# ROWS: labels of the rows below to run (default: all). STATS: `glmrt
# calibrate` output with second moments (docs/convert.md).
set -euo pipefail
build=$1 scratch=$2 model=$3 stats=$4
shift 4
wanted=("$@")
mkdir -p "$scratch"
export GLMRT_PLUGIN_PATH=$build/plugins OMP_WAIT_POLICY=passive
row() {  # LABEL DENSE-PRECISION EXPERTS-PRECISION CONVERT-FLAGS...
  local label=$1 dense=$2 experts=$3
  shift 3
  if [ ${#wanted[@]} -gt 0 ] && [[ " ${wanted[*]} " != *" $label "* ]]; then return; fi
  local dir="$scratch/c-$label"
  rm -rf "$dir"
  local start end bits
  start=$(date +%s.%N)
  "$build/glmrt" convert --from "$model" --to "$dir" "$@" > /dev/null
  end=$(date +%s.%N)
  bits=$("$build/glmrt" convert --from "$model" --dry-run "$@" |
    awk '$1=="experts"{e=$5} $1=="dense"{d=$5} END{print e "/" d}')
  cat > "$scratch/$label.yaml" <<YAML
plugins: {kernels: auto, io: io-buffered, draft: none}
precision: {dense: $dense, experts: $experts, kv_cache: f32}
memory: {history: off}
validate: {min_top1: 0, max_kl: 100, max_dlogit: 1000, min_margin: 1e-3, greedy_identical: false}
YAML
  "$build/glmrt" validate --profile "$scratch/$label.yaml" --model "$dir" --ref "$model/ref.json" \
    --json > "$scratch/$label.json" 2> /dev/null || true
  python3 - "$scratch/$label.json" "$label" "$bits" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["cases"]
kl = sum(c["mean_kl"] for c in cases) / len(cases)
worst = max(c["mean_kl"] for c in cases)
top1 = sum(c["top1_agree"] for c in cases) / len(cases)
secs = float(sys.argv[5]) - float(sys.argv[4])
print(f"| {sys.argv[2]} | {sys.argv[3]} | {kl:.4f} | {worst:.4f} | {100 * top1:.1f}% | {secs:.1f} s |",
      flush=True)
PY
  rm -rf "$dir"
}
echo "| row | bits/weight experts/dense (this model) | mean KL | worst case KL | same top-1 | convert |"
echo "| --- | --- | --- | --- | --- | --- |"
methods() {  # LABEL DENSE EXPERTS CONVERT-FLAGS...
  local label=$1
  shift
  row "$label" "$@"
  row "$label.rtn" "$@" --importance "$stats" --method rtn
  row "$label.gptq" "$@" --importance "$stats" --method gptq
}
for fmt in ${ALL_FORMATS:-int4-k32 int4-g64}; do
  methods "all-$fmt" "$fmt" "$fmt" --experts "$fmt" --dense "$fmt" --embed int8 --lm-head int8
done
for fmt in ${EXPERT_FORMATS:-int3-k32 int3-g64 int2-k16}; do
  methods "experts-$fmt" int8 "$fmt" --experts "$fmt" --dense int8
done
