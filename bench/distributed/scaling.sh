#!/usr/bin/env bash
# Decode speed and aggregate expert read bandwidth for N = 1..4 ranks of
# `mpirun` on one machine, each capped at the profile's max_bytes_per_second
# (capped.yaml), N (and the profiles) alternated and repeated. Prints, per
# profile, one line per N with the medians and the ratios the targets name
# (docs/distributed.md, *Scaling on one machine*).
# Usage: bench/distributed/scaling.sh MODEL [REPS] [NEW_TOKENS]
# Environment: GLMRT (the binary), PROFILES (space-separated; default
# capped.yaml here), NS (the rank counts, default "1 2 3 4"; 1 first: the
# ratios are to it), OUT (the folder for the raw JSON and stderr of every
# run; default a new one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
glmrt=${GLMRT:-$here/../../build/glmrt}
model=$1 reps=${2:-3} tokens=${3:-8}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
read -r -a profiles <<<"${PROFILES:-$here/capped.yaml}"
read -r -a ns <<<"${NS:-1 2 3 4}"
flags=(--allow-run-as-root --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo
       --mca oob_tcp_if_include lo)
for rep in $(seq 1 "$reps"); do
  for n in "${ns[@]}"; do
    for p in "${!profiles[@]}"; do
      launch=()
      [ "$n" -gt 1 ] && launch=(mpirun "${flags[@]}" -n "$n")
      status=0
      "${launch[@]}" "$glmrt" bench --model "$model" --profile "${profiles[$p]}" --reps 1 \
        -n "$tokens" --prompt-ids 1 --json >"$out/p$p-n$n-$rep.json" 2>"$out/p$p-n$n-$rep.err" ||
        status=$?
      # A run whose JSON is complete still counts (mpirun sometimes reports an
      # improper exit after rank 0 printed its result); its status is shown.
      echo "$(basename "${profiles[$p]}") N=$n rep $rep done (status $status)" >&2
    done
  done
done
python3 - "$out" "$reps" "${ns[*]}" "${profiles[@]}" <<'PY'
import json, re, statistics, sys
out, reps, ns, profiles = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3].split()], sys.argv[4:]
units = {"": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KIB": 1024, "MIB": 1024**2, "GIB": 1024**3}
for p, profile in enumerate(profiles):
    # B: each rank's cap, from the profile's max_bytes_per_second.
    cap = re.search(r"max_bytes_per_second:\s*([0-9.]+)\s*([A-Za-z]*)", open(profile).read())
    B = float(cap.group(1)) * units[cap.group(2).upper()] / 1e9 if cap else float("nan")
    print(f"{profile}: B = {B * 1e3:g} MB/s per rank")
    print("N  decode tok/s  of N x one's  all ranks read GB/s  of N x B  exchange ms/step  of which the exchange itself  runs (tok/s)")
    one = None
    for n in ns:
        runs = [json.load(open(f"{out}/p{p}-n{n}-{r}.json"))["profiles"][0]["runs"][0]
                for r in range(1, reps + 1)]
        tps = statistics.median(r["decode_tokens_per_s"] for r in runs)
        gbs = statistics.median(r["all_ranks_read_gb_per_s"] for r in runs)
        ex = statistics.median(r["step_exchange_ms"] for r in runs)
        ov = statistics.median(r["step_exchange_overhead_ms"] for r in runs)
        if n == 1:
            one = (tps,)
        step = 1e3 / tps if tps else 0
        print(f"{n}  {tps:12.4f}  {tps / (n * one[0]):12.2f}  {gbs:19.4f}  {gbs / (n * B):8.2f}"
              f"  {ex:16.1f}  {ov:8.1f} ({100 * ov / step if step else 0:.1f}% of a step)"
              f"  {[round(r['decode_tokens_per_s'], 4) for r in runs]}")
PY
echo "raw JSON in $out" >&2
