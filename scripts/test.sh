#!/usr/bin/env bash
# Builds glmrt and runs every test: the Release build's suite, the build under
# qemu-user's baseline x86-64 and Haswell CPUs (scripts/portable-check.sh,
# about 20 s), then the same suite built with AddressSanitizer +
# UndefinedBehaviorSanitizer, then the fuzz targets for a bounded time
# (scripts/fuzz.sh, about two minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# A test that hangs fails on its own, named, instead of holding CI until its
# limit: the slowest test takes about a minute on 2 cores (tests with a
# TIMEOUT of their own keep it).
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 300
# One glmrt for any x86-64: the build on emulated baseline and AVX2 CPUs.
bash scripts/portable-check.sh build

if [ "${GLMRT_SKIP_SANITIZERS:-0}" != 1 ]; then
  # -O1 with line tables only (-g1) keeps the instrumented build inside CI's
  # time while the sanitizers' reports still name functions and lines.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DGLMRT_WERROR=ON -DGLMRT_SANITIZE=ON -DGLMRT_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON \
    -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
  cmake --build build-asan -j "$(nproc)"
  # Label mpi (glmrt under mpirun, tests/distributed) is left out here: its
  # ranks are separate processes whose MPI libraries are not instrumented;
  # the protocol's own tests (distributed_tests) do run instrumented.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 300 -LE "no-sanitizer|mpi"
fi

if [ "${GLMRT_SKIP_FUZZ:-0}" != 1 ]; then
  bash scripts/fuzz.sh
fi
