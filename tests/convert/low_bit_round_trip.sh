#!/usr/bin/env bash
# convert -> verify -> validate for one routed-expert format on the demo model:
#   low_bit_round_trip.sh GLMRT DEMO_DIR SCRATCH FMT MAX_KL MIN_TOP1 [CONVERT_ARGS...]
# The container must verify and, run with the same format in the profile (its
# tensors adopted as stored), stay within the thresholds measured for FMT.
# CONVERT_ARGS (e.g. --recipe q3-mix) replace `--experts FMT --dense int8`.
set -euo pipefail
glmrt=$1 demo=$2 scratch=$3 fmt=$4 max_kl=$5 min_top1=$6
shift 6
convert_args=("$@")
[ ${#convert_args[@]} -gt 0 ] || convert_args=(--experts "$fmt" --dense int8)
out="$scratch/demo-$fmt-${#convert_args[@]}"
rm -rf "$out" "$out.partial"
mkdir -p "$scratch"
"$glmrt" convert --from "$demo" --to "$out" "${convert_args[@]}" > /dev/null
"$glmrt" verify "$out" > /dev/null
cat > "$scratch/$fmt.yaml" <<YAML
plugins: {kernels: auto, io: io-buffered, draft: none}
precision: {dense: int8, experts: $fmt, kv_cache: f32}
YAML
"$glmrt" validate --profile "$scratch/$fmt.yaml" --model "$out" --ref "$demo/ref.json" \
  --max-kl "$max_kl" --min-top1 "$min_top1" --max-dlogit 100
rm -rf "$out"
