#!/usr/bin/env bash
# calibrate (second moments) -> convert (gptq, the default with them) ->
# verify -> validate, for one routed-expert format on the demo model:
#   gptq_round_trip.sh GLMRT DEMO_DIR SCRATCH FMT MAX_KL MIN_TOP1 TEXT
# The conversion must say it ran gptq, the container verify, and, run with
# the same format, stay within the thresholds measured for FMT.
set -euo pipefail
glmrt=$1 demo=$2 scratch=$3 fmt=$4 max_kl=$5 min_top1=$6 text=$7
out="$scratch/gptq-$fmt"
rm -rf "$out" "$out.partial"
mkdir -p "$scratch"
# reference-avx2: activation statistics need no oracle-exact arithmetic (see trained_targets.sh).
"$glmrt" calibrate --profile "$demo/../../configs/reference-avx2.yaml" --model "$demo" --text "$text" \
  --window 128 --out "$scratch/stats-$fmt.safetensors" 2> /dev/null
"$glmrt" convert --from "$demo" --to "$out" --experts "$fmt" --dense int8 \
  --importance "$scratch/stats-$fmt.safetensors" | grep -q "^method gptq: [1-9]"
"$glmrt" verify "$out" > /dev/null
# history off: the figures must not depend on what earlier runs on this
# machine taught the learning cache (its pinned set changes the grouping of
# expert products, and kernels-avx2's results move in the last bits with it).
cat > "$scratch/gptq-$fmt.yaml" <<YAML
plugins: {kernels: auto, io: io-buffered, draft: none}
precision: {dense: int8, experts: $fmt, kv_cache: f32}
memory: {history: off}
YAML
"$glmrt" validate --profile "$scratch/gptq-$fmt.yaml" --model "$out" --ref "$demo/ref.json" \
  --max-kl "$max_kl" --min-top1 "$min_top1" --max-dlogit 100
rm -rf "$out" "$scratch/stats-$fmt.safetensors"
