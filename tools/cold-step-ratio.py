#!/usr/bin/env python3
"""The cold-step ratio of issue 24 from `glmrt bench --json` output(s).

Per run: step = decode seconds / decode tokens; compute = the step's
`expert matmuls` + `attention` + `other` rows (everything but waiting on
disk); disk = bytes read while decoding per step / the drive's GB/s while
busy (bench's `disk` row: bytes over the seconds with a read in flight);
ratio = step / max(disk, compute). Several files of the same profiles
(benches repeated) are pooled; medians per profile.

usage: tools/cold-step-ratio.py BENCH.json [BENCH2.json ...]
"""
import json
import statistics
import sys

pooled = {}
for path in sys.argv[1:]:
    for prof in json.load(open(path))["profiles"]:
        for r in prof["runs"]:
            n = r["decode_tokens"]
            split = r["step_split_ms"]
            step = r["decode_s"] / n * 1e3
            compute = split["expert_matmuls"] + split["attention"] + split["other"]
            per_step = r["decode_bytes_all_ranks"] / n
            gbs = r["disk_gb_per_s"]
            disk = per_step / (gbs * 1e9) * 1e3 if gbs > 0 else 0.0
            pooled.setdefault(prof["profile"], []).append({
                "tokens/s": r["decode_tokens_per_s"], "step ms": step,
                "waiting ms": split["waiting_on_disk"], "compute ms": compute,
                "KB/step": per_step / 1e3, "disk GB/s": gbs, "disk ms": disk,
                "ratio": step / max(disk, compute), "misses": r["misses"],
                "hit %": 100 * r["cache_hit_rate"],
                # io ABI 1.6 (absent from older benches' JSON: 0)
                "urgent": r.get("urgent_reads", 0), "cancelled": r.get("cancelled_reads", 0)})
for profile, runs in pooled.items():
    print(f"{profile} ({len(runs)} runs)")
    for key in runs[0]:
        values = [run[key] for run in runs]
        print(f"  {key:>11}: median {statistics.median(values):9.3f}   "
              f"(runs: {' '.join(f'{v:.3g}' for v in values)})")
