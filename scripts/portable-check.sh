#!/usr/bin/env bash
# One glmrt binary runs on any x86-64: the built glmrt and plugins, run under
# qemu-user's emulated CPUs (docs/writing-a-plugin.md, "Instruction sets").
#   qemu64 (baseline x86-64: no SSE3/SSE4, POPCNT, AVX): `glmrt plugins` lists
#     kernels-scalar as supported and kernels-avx2 as not, and the oracle
#     validation passes on kernels-scalar;
#   Haswell (AVX2, FMA, F16C; no AVX-512): the oracle validation passes on
#     kernels-avx2, with the core's AVX2 variants;
#   both: glmrt convert of models/glm-demo writes the same bytes as on this
#     CPU (the scale search, row quantization and BF16 reads have a variant
#     per instruction set, all exact).
# An instruction the emulated CPU lacks kills the process with SIGILL.
#
#   bash scripts/portable-check.sh [BUILD_DIR]      (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
glmrt=$build/glmrt
command -v qemu-x86_64 >/dev/null || {
  echo "portable check: qemu-x86_64 is missing (Debian: qemu-user, see scripts/install-deps.sh)" >&2
  exit 1
}
[ -x "$glmrt" ] || {
  echo "portable check: $glmrt is not built" >&2
  exit 1
}
export GLMRT_PLUGIN_PATH=$(realpath "$build")/plugins
# The emulated CPU is slow: threads sleep instead of spinning between regions.
export OMP_WAIT_POLICY=passive
ulimit -c 0  # a faulting run prints its signal; no core file
fixture=tests/fixtures/glm_tiny

fail() {
  echo "portable check: FAILED: $*" >&2
  exit 1
}

# The table's line for a plugin: "<kind> <name> <version> <abi> <score> <yes|no> <path>".
plugin_line() {
  awk -v name="$2" '$2 == name' <<<"$1"
}

validate() {
  local cpu=$1 profile=$2 log
  log=$(qemu-x86_64 -cpu "$cpu" "$glmrt" validate --profile "$profile" --model $fixture \
    --ref $fixture/ref.json 2>&1) || fail "$cpu: glmrt validate --profile $profile exited $?:
$log"
  grep -q "^overall: PASS" <<<"$log" || fail "$cpu: glmrt validate --profile $profile: no PASS:
$log"
  echo "portable check: $cpu: validate --profile $profile: $(grep '^overall:' <<<"$log")"
}

start=$SECONDS
plugins=$(qemu-x86_64 -cpu qemu64 "$glmrt" plugins 2>&1) || fail "qemu64: glmrt plugins exited $?:
$plugins"
echo "$plugins"
[ "$(plugin_line "$plugins" kernels-scalar | awk '{print $6}')" = yes ] ||
  fail "qemu64: kernels-scalar is not listed as supported"
[ "$(plugin_line "$plugins" kernels-avx2 | awk '{print $6}')" = no ] ||
  fail "qemu64: kernels-avx2 is not listed as unsupported"
grep -A1 -E "^kernels +kernels-avx2 " <<<"$plugins" | grep -q "this CPU lacks: avx2 fma f16c" ||
  fail "qemu64: kernels-avx2's reason does not name avx2 fma f16c"
validate qemu64 configs/reference.yaml
validate Haswell configs/reference-avx2.yaml

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for formats in "--experts int4-g64 --dense int8" "--experts int2-g32 --dense int8-g64"; do
  # shellcheck disable=SC2086  # the formats are separate options
  "$glmrt" convert --from models/glm-demo --to "$out/here" $formats >/dev/null ||
    fail "glmrt convert $formats exited $?"
  for cpu in qemu64 Haswell; do
    # shellcheck disable=SC2086
    log=$(qemu-x86_64 -cpu $cpu "$glmrt" convert --from models/glm-demo --to "$out/$cpu" $formats 2>&1) ||
      fail "$cpu: glmrt convert $formats exited $?:
$log"
    diff -r "$out/here" "$out/$cpu" >/dev/null ||
      fail "$cpu: glmrt convert $formats wrote other bytes than on this CPU"
    rm -rf "${out:?}/$cpu"
  done
  rm -rf "${out:?}/here"
  echo "portable check: qemu64, Haswell: glmrt convert $formats: the same bytes as on this CPU"
done
echo "portable check: passed in $((SECONDS - start)) s"
