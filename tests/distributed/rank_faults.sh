#!/usr/bin/env bash
# A rank killed mid-generation, and one that stops answering (SIGSTOP): in
# both rank 0 ends the run with a non-zero status within the profile's
# timeout (plus mpirun's own teardown), and its error names the rank.
# Usage: rank_faults.sh GLMRT MPIRUN SOURCE_DIR (GLMRT_MPIRUN_FLAGS from ctest).
set -u
glmrt=$1 mpirun=$2 src=$3
read -r -a flags <<<"${GLMRT_MPIRUN_FLAGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profile=$work/profile.yaml
cp "$src/configs/reference.yaml" "$profile"
printf 'distributed:\n  timeout_seconds: 3\n' >>"$profile"
model=$src/tests/fixtures/glm_tiny
args=(run --profile "$profile" --model "$model" --prompt-ids 1,2,3 -n 4000 --ignore-eos)
failed=0

# $1: the signal sent to rank 2; $2: what rank 0's error must say.
check() {
  local signal=$1 expected=$2
  rm -f "$work/pid" "$work/err"
  local start=$SECONDS
  "$mpirun" "${flags[@]}" -n 2 "$glmrt" "${args[@]}" : \
    -n 1 bash -c 'echo $$ >"$0"; exec "$@"' "$work/pid" "$glmrt" "${args[@]}" \
    >"$work/out" 2>"$work/err" &
  local job=$!
  for _ in $(seq 1 300); do
    [ -s "$work/pid" ] && grep -q "routed experts over" "$work/err" 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.5  # generating by now
  kill "-$signal" "$(cat "$work/pid")"
  wait "$job"
  local status=$? elapsed=$((SECONDS - start))
  [ "$signal" = STOP ] && kill -KILL "$(cat "$work/pid")" 2>/dev/null
  if [ "$status" -eq 0 ]; then
    echo "FAIL ($signal): the run ended with status 0"; failed=1
  fi
  if ! grep -q "$expected" "$work/err"; then
    echo "FAIL ($signal): rank 0's error does not say \`$expected\`:"; cat "$work/err"; failed=1
  fi
  if [ "$elapsed" -gt 40 ]; then
    echo "FAIL ($signal): took ${elapsed} s"; failed=1
  fi
  echo "$signal: status $status after ${elapsed} s"; grep "glmrt: error" "$work/err"
}

check KILL "rank 2"
check STOP "rank 2 (host [^)]*) did not answer within 3 s"

# serve: the request a stopped rank leaves unanswered gets an error, then the
# server stops cleanly and the job ends non-zero naming the rank.
if command -v curl >/dev/null; then
  port=$((20000 + RANDOM % 20000))
  serve=(serve --profile "$profile" --model "$model" --port "$port")
  rm -f "$work/pid"
  "$mpirun" "${flags[@]}" -n 2 "$glmrt" "${serve[@]}" : \
    -n 1 bash -c 'echo $$ >"$0"; exec "$@"' "$work/pid" "$glmrt" "${serve[@]}" \
    >"$work/out" 2>"$work/err" &
  job=$!
  request() {
    curl -s -m 30 "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
      -d '{"prompt": [1, 2, 3], "max_tokens": 4}'
  }
  for _ in $(seq 1 300); do grep -q "glmrt serve: .* on http" "$work/err" 2>/dev/null && break; sleep 0.1; done
  first=$(request)
  kill -STOP "$(cat "$work/pid")"
  second=$(request)
  wait "$job"
  status=$?
  kill -KILL "$(cat "$work/pid")" 2>/dev/null
  case "$first" in *'"choices"'*) ;; *) echo "FAIL (serve): the first request got: $first"; failed=1 ;; esac
  case "$second" in *'"error"'*) ;; *) echo "FAIL (serve): the second request got: $second"; failed=1 ;; esac
  if [ "$status" -eq 0 ] || ! grep -q "glmrt serve: stopped" "$work/err" ||
    ! grep -q "glmrt: error: rank 2 (host [^)]*) did not answer" "$work/err"; then
    echo "FAIL (serve): status $status:"; cat "$work/err"; failed=1
  fi
  echo "serve: status $status"
fi
exit $failed
