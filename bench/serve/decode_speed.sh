#!/usr/bin/env bash
# Decode tokens/s of the same generation through `glmrt run` and through
# `glmrt serve` (non-streamed and streamed /v1/completions), interleaved so a
# busy machine affects all three alike. Prints one line per round; the
# server's figure is its own glmrt_last_request_decode_tokens_per_second.
#   bash bench/serve/decode_speed.sh [PROFILE] [MODEL] [ROUNDS] [TOKENS]
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=${1:-configs/reference.yaml}
model=${2:-tests/fixtures/glm_tiny}
rounds=${3:-6}
tokens=${4:-128}
export OMP_WAIT_POLICY=passive
log=$(mktemp)
build/glmrt serve --profile "$profile" --model "$model" --port 0 --quiet 2>"$log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'on http://' "$log" && break; sleep 0.2; done
port=$(grep -o '127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
url=http://127.0.0.1:$port

last_decode() { curl -s "$url/metrics" | awk '/^glmrt_last_request_decode_tokens_per_second/ {print $2}'; }
complete() {  # prompt-ids stream
  curl -s -N -o /dev/null "$url/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\": [$1], \"max_tokens\": $((tokens + 1)), \"ignore_eos\": true, \"temperature\": 0, \"stream\": $2}"
}
echo "decode tokens/s (prefill excluded), $tokens tokens, $profile, $model"
printf '%-6s %10s %10s %10s\n' round run serve stream
for round in $(seq "$rounds"); do
  run=$(build/glmrt run --profile "$profile" --model "$model" --prompt-ids "1,2,$round" \
          -n $((tokens + 1)) --ignore-eos 2>&1 >/dev/null | sed -n 's/.*decode: .*(\([0-9.]*\) tokens\/s).*/\1/p')
  complete "1,3,$round" false
  serve=$(last_decode)
  complete "1,4,$round" true
  stream=$(last_decode)
  printf '%-6s %10.1f %10.1f %10.1f\n' "$round" "$run" "$serve" "$stream"
done
