#!/usr/bin/env bash
# Installs everything glmrt needs to build, test and benchmark, from Debian packages.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-filesystem-dev libboost-program-options-dev
  libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libpcre2-dev libicu-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev libsimde-dev
  libxxhash-dev  # container checksums (glmrt convert, glmrt verify)
  libopenmpi-dev openmpi-bin  # expert parallelism over MPI (mpirun -n N glmrt ...)
  libssl-dev     # SHA-256 of the chat template a model ships
  clang-format
  libcpp-httplib-dev  # glmrt serve
  libedit-dev         # glmrt chat: line editing and history
  libjs-marked libjs-highlight.js  # the chat page: markdown and code highlighting, embedded at build time
  chromium            # the chat page's browser test
  clang libclang-rt-14-dev  # libFuzzer and the sanitizers' runtimes, for scripts/fuzz.sh
  qemu-user           # older CPUs emulated, for scripts/portable-check.sh
)
# Node.js + npm run the `openai` client and the browser test; a Node.js that
# is already installed (e.g. from NodeSource, which bundles npm) is kept.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
