#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and runs
# each for a bounded time; a crash, hang, leak or out-of-memory fails the run
# and prints the reproducer's path. See docs/fuzzing.md.
#
#   bash scripts/fuzz.sh                       # every target, 11 s each
#   GLMRT_FUZZ_SECONDS=3600 bash scripts/fuzz.sh tokenizer   # one target, an hour (total time)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

build=build-fuzz
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build" -j "$(nproc)"
build_seconds=$SECONDS

if (($#)); then targets=("$@"); else mapfile -t targets <"$build/targets.txt"; fi
# Each target gets 11 s by default (what eight targets had of the former
# 90 s); GLMRT_FUZZ_SECONDS sets the total instead, shared evenly.
if [ -n "${GLMRT_FUZZ_SECONDS:-}" ]; then
  seconds=$((GLMRT_FUZZ_SECONDS / ${#targets[@]}))
else
  seconds=11
fi
((seconds >= 1)) || seconds=1

# Per-target input size limits: large enough for every structure the parser
# knows (a chat request can nest past the 256-level depth bound), small enough
# to keep executions fast.
max_len() {
  case "$1" in
    safetensors | model_dir | gguf) echo 8192 ;;
    tokenizer | chat_request) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

# Targets write each input to a file; on tmpfs that costs no disk time.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

failed=()
for target in "${targets[@]}"; do
  work="$build/corpus/$target" crashes="$build/crashes/$target" log="$build/logs/$target.log"
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")"
    -artifact_prefix="$crashes/" -print_final_stats=1)
  [ -f "fuzz/dict/$target.dict" ] && options+=(-dict="fuzz/dict/$target.dict")
  # New inputs go to the build folder's corpus; the checked-in one is only read.
  if "$build/fuzz_$target" "${options[@]}" "$work" "fuzz/corpus/$target" >"$log" 2>&1; then
    echo "fuzz $target: ok, $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" |
      grep -o '[0-9]*$') inputs in ${seconds}s"
  else
    echo "fuzz $target: FAILED (log: $log)" >&2
    grep -E "ERROR: |SUMMARY: |what\(\): |^    #[0-9] " "$log" | head -30 >&2
    sed -n 's/.*Test unit written to \(.*\)/  reproducer: \1/p' "$log" >&2
    failed+=("$target")
  fi
done
echo "fuzz step: build ${build_seconds}s, fuzzing $((SECONDS - build_seconds))s"
if ((${#failed[@]})); then
  echo "fuzzing found problems in: ${failed[*]} (see docs/fuzzing.md to minimise and replay)" >&2
  exit 1
fi
