#!/usr/bin/env python3
"""Speculative decoding figures measured by `glmrt run` (docs/speculative-decoding.md).

acceptance: one drafter at a fixed draft length over a set of prompts; sums the
  `draft acceptance by position` and `draft:` report lines into acceptance per
  draft position and tokens per forward.
compare: the same prompts decoded without drafting, with fixed-length MTP drafts,
  with n-gram drafts and with adaptive MTP (and adaptive n-gram), runs alternated and
  repeated; prints median decode tokens/s per variant and prompt, and checks that every
  variant emitted the same greedy tokens.

Each variant is the base profile with its `plugins` draft keys (and, when given, the
expert cache size and io settings) replaced, written to a temporary folder.
"""
import argparse
import copy
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))

# Plain English openings (the demo model was trained on English prose).
TEXT_PROMPTS = [
    "The jury said",
    "Once upon a time, in a small village by the sea,",
    "The president of the company announced that",
    "In the morning the children went to school and",
    "Scientists have found that the",
    "He opened the door and saw",
    "The city council voted on Tuesday to",
    "It was a cold winter night when",
    "The new law will require every",
    "She looked at the old photograph and remembered",
    "According to the report, the number of",
    "After the war, many families",
]


VARIANTS = {
    "none": {"draft": "none"},
    "mtp-fixed": {"draft": {"name": "draft-mtp", "settings": {"p_min": "0"}},
                  "max_draft_tokens": 3, "draft_adaptive": False},
    "ngram-fixed": {"draft": {"name": "draft-ngram", "settings": {"min_n": "1", "max_n": "4"}},
                    "max_draft_tokens": 3, "draft_adaptive": False},
    "mtp-adaptive": {"draft": "draft-mtp", "max_draft_tokens": 4, "draft_adaptive": True},
    "ngram-adaptive": {"draft": {"name": "draft-ngram", "settings": {"min_n": "1", "max_n": "4"}},
                       "max_draft_tokens": 4, "draft_adaptive": True},
}

DECODE = re.compile(r"decode: (\d+) tokens in ([0-9.]+) s \(([0-9.]+) tokens/s\)")
DRAFT = re.compile(r"draft: \S+: (\d+) forwards decided (\d+) tokens .*?(\d+) proposed, "
                   r"(\d+) accepted")
POSITION = re.compile(r"(\d+): (\d+)/(\d+) \(")
HIT = re.compile(r"expert cache: hit rate ([0-9.]+)%")


def variant_profile(base, plugins, model, expert_cache, io_settings, folder, name):
    with open(base) as f:
        profile = yaml.safe_load(f)
    profile = copy.deepcopy(profile)
    for key in ("draft", "max_draft_tokens", "draft_min_tokens", "draft_adaptive"):
        profile["plugins"].pop(key, None)
    profile["plugins"].update(plugins)
    profile.pop("model", None)
    if expert_cache is not None:
        profile["memory"]["expert_cache"] = expert_cache
    if io_settings:
        io = profile["plugins"]["io"]
        io = io if isinstance(io, dict) else {"name": io}
        io.setdefault("settings", {}).update(io_settings)
        profile["plugins"]["io"] = io
    path = os.path.join(folder, f"{name}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(profile, f, sort_keys=False)
    return path


def run(args, profile, prompt, temperature, seed):
    cmd = [args.glmrt, "run", "--profile", profile, "--model", args.model, "-n",
           str(args.new_tokens), "--ignore-eos", "--temperature", str(temperature),
           "--seed", str(seed)]
    if not args.profile_sampling:  # the model's own distribution: no truncation, no penalty
        cmd += ["--top-p", "1", "--top-k", "0", "--min-p", "0", "--repetition-penalty", "1",
                "--presence-penalty", "0"]
    cmd += ["--prompt-ids", prompt] if prompt[0].isdigit() else ["--prompt", prompt]
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    text = out.stdout + out.stderr
    m = DECODE.search(text)
    result = {"tokens_per_second": float(m.group(3)), "decoded": int(m.group(1)),
              "output": out.stdout, "cpu_seconds": cpu, "forwards": 0, "decided": 0, "proposed": 0,
              "accepted": 0, "positions": {}, "hit_rate": None}
    if h := HIT.search(text):
        result["hit_rate"] = float(h.group(1))
    if d := DRAFT.search(text):
        result.update(forwards=int(d.group(1)), decided=int(d.group(2)),
                      proposed=int(d.group(3)), accepted=int(d.group(4)))
    for line in text.splitlines():
        if line.startswith("draft acceptance by position:"):
            for pos, acc, judged in POSITION.findall(line):
                result["positions"][int(pos)] = (int(acc), int(judged))
    return result


def acceptance(args, folder):
    plugins = {"draft": {"name": args.drafter, "settings": {"p_min": "0"}}
               if args.drafter == "draft-mtp" else args.drafter,
               "max_draft_tokens": args.drafts, "draft_adaptive": False}
    profile = variant_profile(args.profile, plugins, args.model, None, None, folder, "drafter")
    for temperature in args.temperatures:
        acc, judged = {}, {}
        forwards = decided = 0
        for i, prompt in enumerate(TEXT_PROMPTS):
            r = run(args, profile, prompt, temperature, seed=i + 1)
            forwards += r["forwards"]
            decided += r["decided"]
            for pos, (a, j) in r["positions"].items():
                acc[pos] = acc.get(pos, 0) + a
                judged[pos] = judged.get(pos, 0) + j
        cells = " ".join(f"{p}: {acc[p]}/{judged[p]} ({acc[p] / max(judged[p], 1):.3f})"
                         for p in sorted(acc))
        print(f"{args.drafter}, {args.drafts} drafts, temperature {temperature}, "
              f"{len(TEXT_PROMPTS)} prompts x {args.new_tokens} tokens: acceptance by position "
              f"{cells}; {decided} tokens in {forwards} forwards = "
              f"{decided / max(forwards, 1):.2f} tokens per forward")


def compare(args, folder):
    io_settings = {"drop_after_read": "true"} if args.drop_after_read else None
    profiles = {name: variant_profile(args.profile, plugins, args.model, args.expert_cache,
                                      io_settings, folder, name)
                for name, plugins in VARIANTS.items() if name in args.variants}
    rng = random.Random(7)
    vocab = args.vocab
    # Token ids, so that a checkpoint without a tokenizer (make-model) works:
    # random ids said 4 times over, and as many random ids.
    n = args.prompt_length
    period = [rng.randrange(vocab) for _ in range(max(n // 4, 1))]
    prompts = {"repetitive": ",".join(str(t) for t in (period * 4)[:n]),
               "random": ",".join(str(rng.randrange(vocab)) for _ in range(n))}
    for label, prompt in prompts.items():
        if label not in args.prompts:
            continue
        speeds = {name: [] for name in profiles}
        cpu = {name: [] for name in profiles}
        last = {}
        outputs = {}
        unstable = set()  # variants whose own runs disagreed
        for rep in range(args.reps):
            order = list(profiles) if rep % 2 == 0 else list(reversed(profiles))
            for name in order:
                r = run(args, profiles[name], prompt, 0, seed=1)
                speeds[name].append(r["tokens_per_second"])
                cpu[name].append(r["cpu_seconds"])
                last[name] = r
                outputs.setdefault(name, r["output"])
                if r["output"] != outputs[name]:
                    unstable.add(name)
        base = statistics.median(speeds["none"]) if "none" in speeds else None
        base_cpu = statistics.median(cpu["none"]) if "none" in cpu else None
        print(f"{label} prompt, {args.reps} runs each, alternated, medians:")
        for name in profiles:
            med = statistics.median(speeds[name])
            r = last[name]
            rel = f" ({med / base:.2f}x none)" if base else ""
            med_cpu = statistics.median(cpu[name])
            rel_cpu = f" ({med_cpu / base_cpu:.2f}x none)" if base_cpu else ""
            tpf = f"{r['decided'] / r['forwards']:.2f}" if r["forwards"] else "1.00"
            first = outputs[next(iter(profiles))].replace(",", " ").split()
            mine = outputs[name].replace(",", " ").split()
            at = next((i for i, (a, b) in enumerate(zip(first, mine)) if a != b), None)
            same = "same tokens" if first == mine else f"DIFFERENT from token {at}"
            if name in unstable:
                same += " (its own runs disagree)"
            print(f"  {name:15s} {med:8.3g} tokens/s{rel}; process CPU {med_cpu:.3f} s{rel_cpu}; "
                  f"tokens per forward {tpf}; "
                  f"accepted {r['accepted']}/{r['proposed']}; hit rate {r['hit_rate']}%; "
                  f"runs {' '.join(f'{s:.3g}' for s in speeds[name])}; {same}")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["acceptance", "compare"])
    p.add_argument("--glmrt", default=os.path.join(ROOT, "build/glmrt"))
    p.add_argument("--model", default=os.path.join(ROOT, "models/glm-demo"))
    p.add_argument("--profile", default=os.path.join(ROOT, "configs/demo.yaml"))
    p.add_argument("-n", "--new-tokens", type=int, default=64)
    p.add_argument("--drafter", default="draft-mtp", help="acceptance: the drafter")
    p.add_argument("--drafts", type=int, default=3, help="acceptance: drafts per step")
    p.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 1.0])
    p.add_argument("--profile-sampling", action="store_true",
                   help="keep the profile's top-p/top-k/min-p and penalties (default: off, so "
                   "temperature alone shapes the model's distribution)")
    p.add_argument("--reps", type=int, default=7, help="compare: runs per variant and prompt")
    p.add_argument("--expert-cache", type=int, help="compare: memory.expert_cache")
    p.add_argument("--drop-after-read", action="store_true",
                   help="compare: io-buffered drops what it read from the page cache")
    p.add_argument("--vocab", type=int, default=4000,
                   help="compare: prompt ids are drawn below this (default: the demo model's)")
    p.add_argument("--prompts", nargs="+", default=["repetitive", "random"],
                   choices=["repetitive", "random"], help="compare: which prompts")
    p.add_argument("--prompt-length", type=int, default=48, help="compare: prompt tokens")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="glmrt-drafting-") as folder:
        (acceptance if args.mode == "acceptance" else compare)(args, folder)


if __name__ == "__main__":
    main()
