#!/usr/bin/env bash
# Installs the packages pinned by package-lock.json into DIR/node_modules with
# `npm ci`, unless that same lockfile is installed there already (a stamp
# holds its hash), so repeated ctest runs do not reinstall.
set -euo pipefail
cd "$1"
stamp=node_modules/.glmrt-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "node_modules matches package-lock.json"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
