#!/usr/bin/env bash
# Decode speed and aggregate expert read bandwidth for N = 1..4 ranks of
# `mpirun` on one machine, each capped at the profile's max_bytes_per_second
# (capped.yaml), N alternated and repeated. Prints one line per N with the
# medians (docs/distributed.md, *Scaling on one machine*).
# Usage: bench/distributed/scaling.sh MODEL [REPS] [NEW_TOKENS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
glmrt=${GLMRT:-$here/../../build/glmrt}
model=$1 reps=${2:-3} tokens=${3:-8}
out=$(mktemp -d)
flags=(--allow-run-as-root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo
       --mca oob_tcp_if_include lo)
for rep in $(seq 1 "$reps"); do
  for n in 1 2 3 4; do
    launch=()
    [ "$n" -gt 1 ] && launch=(mpirun "${flags[@]}" -n "$n")
    "${launch[@]}" "$glmrt" bench --model "$model" --profile "$here/capped.yaml" --reps 1 \
      -n "$tokens" --prompt-ids 1 --json >"$out/n$n-$rep.json" 2>"$out/n$n-$rep.err"
    echo "N=$n rep $rep done" >&2
  done
done
python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
print("N  decode tok/s  all ranks read GB/s  exchange ms/step  of which the exchange itself  runs")
for n in range(1, 5):
    runs = [json.load(open(f"{out}/n{n}-{r}.json"))["profiles"][0]["runs"][0] for r in range(1, reps + 1)]
    tps = statistics.median(r["decode_tokens_per_s"] for r in runs)
    gbs = statistics.median(r["all_ranks_read_gb_per_s"] for r in runs)
    ex = statistics.median(r["step_exchange_ms"] for r in runs)
    ov = statistics.median(r["step_exchange_overhead_ms"] for r in runs)
    step = 1e3 / tps if tps else 0
    print(f"{n}  {tps:12.3f}  {gbs:19.3f}  {ex:16.2f}  {ov:8.2f} ({100 * ov / step if step else 0:.1f}% of a step)  {[round(r['decode_tokens_per_s'], 3) for r in runs]}")
PY
echo "raw JSON in $out" >&2
