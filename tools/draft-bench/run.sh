#!/usr/bin/env bash
# Drafting under expert streaming (docs/speculative-decoding.md, "Measured
# under streaming"): no drafting, fixed and adaptive MTP, fixed and adaptive
# n-gram, alternated, on a prompt the model continues predictably (rep.ids:
# 1000..1047 then 1000..1003, with a --successor-head model that continues
# 1004, 1005, ...) and on a random one (rand.ids).
#   tools/draft-bench/run.sh BUILD_DIR MODEL_DIR OUT_DIR [REPS]
# MODEL_DIR: glmrt make-model --preset glm5-slice --moe-layers 3 --successor-head --out MODEL_DIR
# Writes OUT_DIR/{rep,rand}.json (glmrt bench --json) and prints the medians.
set -euo pipefail
build=$1 model=$2 out=$3 reps=${4:-5}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
profiles=()
for p in none mtp-fixed mtp-adaptive ngram-fixed ngram-adaptive; do profiles+=(--profile "$here/$p.yaml"); done
for prompt in rep rand; do
  GLMRT_PLUGIN_PATH=${GLMRT_PLUGIN_PATH:-$build/plugins} "$build/glmrt" bench --json --model "$model" \
    "${profiles[@]}" --reps "$reps" -n 32 --prompt-ids "$(cat "$here/$prompt.ids")" > "$out/$prompt.json"
  python3 - "$out/$prompt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = None
print(sys.argv[1])
for p in d["profiles"]:
    med = p["median"]["decode (tokens/s)"]
    base = base or med
    draft = [r.get("draft") or {} for r in p["runs"]]
    gb = sorted(round(r["bytes_read"] / 1e9, 2) for r in p["runs"])
    print(f'  {p["profile"].split("/")[-1]:20s} {med:.2f} tok/s ({med / base:.2f}x)'
          f'  proposed {[x.get("proposed", 0) for x in draft]}'
          f'  accepted {[x.get("accepted", 0) for x in draft]}  GB read {gb[0]}-{gb[-1]}')
PY
done
