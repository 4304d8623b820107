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

# serve: the request a lost rank leaves unanswered gets an error; the rank is
# left out and the server goes on, the other ranks running its experts (each
# has the model's files); SIGTERM then stops it cleanly. A stopped rank under
# mpirun's defaults, and a killed one under mpirun's recovery flags (without
# them mpirun ends the whole job when a rank dies: `check KILL` above).
# $1: the signal for the last rank; $2: ranks; $3: the profile; $4: whether
# the others can cover its experts; the rest: extra mpirun flags.
serve_check() {
  local signal=$1 ranks=$2 serve_profile=$3 covered=$4
  shift 4
  local port=$((20000 + RANDOM % 20000)) last=$((ranks - 1))
  local serve=(serve --profile "$serve_profile" --model "$model" --port "$port")
  local middle=()
  [ "$ranks" -gt 2 ] && middle=(-n $((ranks - 2)) "$glmrt" "${serve[@]}" :)
  rm -f "$work/pid0" "$work/pid"
  "$mpirun" "${flags[@]}" "$@" -n 1 bash -c 'echo $$ >"$0"; exec "$@"' "$work/pid0" \
    "$glmrt" "${serve[@]}" : "${middle[@]}" \
    -n 1 bash -c 'echo $$ >"$0"; exec "$@"' "$work/pid" "$glmrt" "${serve[@]}" \
    >"$work/out" 2>"$work/err" &
  local job=$!
  request() {
    curl -s -m 30 "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
      -d '{"prompt": [1, 2, 3], "max_tokens": 4}'
  }
  for _ in $(seq 1 300); do grep -q "glmrt serve: .* on http" "$work/err" 2>/dev/null && break; sleep 0.1; done
  local first second third="" start=$SECONDS
  first=$(request)
  kill "-$signal" "$(cat "$work/pid")"
  second=$(request)
  if [ "$covered" = yes ]; then
    third=$(request)
    kill -TERM "$(cat "$work/pid0")"
  fi
  wait "$job"
  local status=$? elapsed=$((SECONDS - start)) name="serve, $signal, $ranks ranks"
  kill -KILL "$(cat "$work/pid")" 2>/dev/null
  case "$first" in *'"choices"'*) ;; *) echo "FAIL ($name): the first request got: $first"; failed=1 ;; esac
  case "$second" in *'"error"'*) ;; *) echo "FAIL ($name): the second request got: $second"; failed=1 ;; esac
  if ! grep -q "glmrt serve: stopped" "$work/err" || [ "$elapsed" -gt 40 ]; then
    echo "FAIL ($name): no clean stop within 40 s (${elapsed} s):"; cat "$work/err"; failed=1
  fi
  if [ "$covered" = yes ]; then
    # The server stayed up: the next request is answered, the rank named as left out.
    case "$third" in *'"choices"'*) ;; *) echo "FAIL ($name): the third request got: $third"; failed=1 ;; esac
    if ! grep -q "rank $last (host [^)]*) did not answer within 3 s .* left out from now on" "$work/err"; then
      echo "FAIL ($name): rank 0 did not say it left rank $last out:"; cat "$work/err"; failed=1
    fi
  elif [ "$status" -eq 0 ] || ! grep -q "glmrt: error: rank $last (host [^)]*) did not answer" "$work/err"; then
    # Nobody left to run the experts: the server stops, the job ends non-zero naming the rank.
    echo "FAIL ($name): status $status:"; cat "$work/err"; failed=1
  fi
  echo "$name: status $status after ${elapsed} s"
}

if command -v curl >/dev/null; then
  serve_check STOP 3 "$profile" yes
  serve_check KILL 3 "$profile" yes --enable-recovery --mca orte_abort_on_non_zero_status 0
  alone=$work/alone.yaml  # rank 0 runs no experts: with its one expert rank gone, none can
  cp "$profile" "$alone"
  printf '  rank0_experts: false\n' >>"$alone"
  serve_check STOP 2 "$alone" no
fi
exit $failed
