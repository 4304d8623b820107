#!/usr/bin/env python3
"""Turns kernels_bench JSON (--benchmark_format=json, with repetitions and
--benchmark_report_aggregates_only) into Markdown tables of the medians:
one row per plugin/shape/format, with S = 1, 4, 16 side by side."""
import json
import sys
from collections import defaultdict


def medians(path):
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    out = {}
    for run in runs:
        if run.get("aggregate_name", "median") != "median" or run.get("error_occurred"):
            continue
        name = run["run_name"] if "run_name" in run else run["name"]
        name = name.replace("/manual_time", "").replace("/real_time", "")
        out[name] = run
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: table.py kernels.json")
    runs = medians(sys.argv[1])
    for name in ("baseline/memory_read", "baseline/int8_dot_l1"):
        if name in runs:
            r = runs[name]
            rate = r.get("bytes_per_second") or r.get("MAC/s")
            unit = "GB/s" if "bytes_per_second" in r else "GMAC/s"
            print(f"- {name}: {rate / 1e9:.1f} {unit}")
    rows = defaultdict(dict)
    for name, r in runs.items():
        parts = name.split("/")
        if len(parts) != 4 or not parts[3].startswith("S="):
            continue
        rows[tuple(parts[:3])][int(parts[3][2:])] = r
    print()
    print("| plugin | shape | format | S=1 µs | S=1 GB/s | bw_ratio | S=4 µs | S=16 µs "
          "| S=16 ÷ S=1 | S=16 int8_ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (plugin, shape, fmt), by_s in rows.items():
        def cell(s, key, scale=1.0, digits=2):
            value = by_s.get(s, {}).get(key)
            return "" if value is None else f"{value * scale:.{digits}f}"
        print(f"| {plugin} | {shape} | {fmt} | {cell(1, 'real_time', 1, 0)} "
              f"| {cell(1, 'weight_B/s', 1e-9, 1)} | {cell(1, 'bw_ratio')} "
              f"| {cell(4, 'real_time', 1, 0)} | {cell(16, 'real_time', 1, 0)} "
              f"| {cell(16, 'time_vs_s1', 1, 1)} | {cell(16, 'int8_ratio')} |")


if __name__ == "__main__":
    main()
