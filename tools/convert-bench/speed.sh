#!/usr/bin/env bash
# Convert speed against the drive's sequential write rate, measured in the
# same run: REPS times, alternately, `dd oflag=direct` of as many bytes as the
# conversion writes, then `glmrt convert` of INPUT (its page cache dropped
# first, so it is read from the drive); prints each run and the medians.
#   tools/convert-bench/speed.sh BUILD_DIR INPUT_DIR SCRATCH_DIR [REPS] [CONVERT-FLAGS...]
# INPUT_DIR: e.g. from tools/convert-bench/make_bf16_checkpoint.py.
set -euo pipefail
build=$1 input=$2 scratch=$3 reps=${4:-3}
shift $(($# < 4 ? $# : 4))
mkdir -p "$scratch"
drop_cache() {  # the input is read from the drive, not the page cache
  python3 - "$@" <<'PY'
import os, sys
for root in sys.argv[1:]:
    for dirpath, _, names in os.walk(root):
        for n in names:
            fd = os.open(os.path.join(dirpath, n), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
PY
}
bytes=$("$build/glmrt" convert --from "$input" --dry-run "$@" | awk '/GB with headers/{print int($3 * 1e9)}')
mb=$((bytes / (8 << 20) + 1))
dd_rates=() written=() read=()
for i in $(seq "$reps"); do
  sync
  rate=$(dd if=/dev/zero of="$scratch/dd.bin" bs=8M count=$mb oflag=direct conv=fsync 2>&1 |
    awk '/copied/{for (k = 1; k <= NF; ++k) if ($k == "s,") printf "%.0f\n", $1 / $(k - 1) / 1e6}')
  rm -f "$scratch/dd.bin"
  drop_cache "$input"
  line=$("$build/glmrt" convert --from "$input" --to "$scratch/out" --force "$@")
  rm -rf "$scratch/out"
  w=$(echo "$line" | sed -E 's/.*MB\/s read, ([0-9.]+) MB\/s written.*/\1/')
  r=$(echo "$line" | sed -E 's/.*s \(([0-9.]+) MB\/s read.*/\1/')
  echo "run $i: dd ${rate} MB/s | convert: $line"
  dd_rates+=("$rate") written+=("$w") read+=("$r")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
dd=$(median "${dd_rates[@]}") w=$(median "${written[@]}")
echo "dd median: $dd MB/s ($((mb * 8)) MiB, oflag=direct)"
echo "convert median: $w MB/s written, $(median "${read[@]}") MB/s read"
r=$(median "${read[@]}")
awk -v w="$w" -v r="$r" -v d="$dd" \
  'BEGIN{printf "ratio written/dd: %.0f%%, read/dd: %.0f%%\n", 100 * w / d, 100 * r / d}'
