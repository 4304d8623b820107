#!/usr/bin/env python3
"""Check that training is deterministic and resumable: N steps straight, again straight, and
N/2 (--stop-after) + the rest resumed from resume.pt must give identical tensors.

  python3 check_resume.py --work work [--preset trained] [--steps 6 --batch 2 --seq 64]

WORK must hold corpus/ and tokenizer.json (run.sh's first two stages); the runs go to temporary
folders. Exits non-zero naming the tensors that differ.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def train(work, args, extra=()):
    cmd = [sys.executable, os.path.join(HERE, "train.py"), "--work", work, "--preset",
           args.preset, "--steps", str(args.steps), "--batch", str(args.batch), "--seq",
           str(args.seq), "--eval-every", str(args.steps), *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    path = os.path.join(work, "ckpt.pt")
    return torch.load(path)["state"] if os.path.exists(path) else None


def differing(a, b):
    if a.keys() != b.keys():
        return sorted(set(a) ^ set(b))
    return [k for k in a if not torch.equal(a[k], b[k])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    ap.add_argument("--preset", default="trained")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=64)
    args = ap.parse_args()
    source = os.path.abspath(args.work)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for name in ("straight", "again", "resumed"):
            work = os.path.join(tmp, name)
            os.makedirs(work)
            os.symlink(os.path.join(source, "corpus"), os.path.join(work, "corpus"))
            os.symlink(os.path.join(source, "tokenizer.json"), os.path.join(work, "tokenizer.json"))
            if name == "resumed":
                if train(work, args, ("--stop-after", str(args.steps // 2))) is not None:
                    sys.exit("the stopped run wrote ckpt.pt: --stop-after did not stop it")
            runs[name] = train(work, args)
    failed = False
    for name in ("again", "resumed"):
        diff = differing(runs["straight"], runs[name])
        print(f"{name} vs straight: {len(runs[name])} tensors, {len(diff)} differ {diff[:5]}")
        failed |= bool(diff)
    if failed:
        sys.exit(f"FAIL: preset {args.preset}, {args.steps} steps of {args.batch} x {args.seq}")
    print(f"PASS: preset {args.preset}: {args.steps} steps straight == again == "
          f"{args.steps // 2} + {args.steps - args.steps // 2} resumed, every tensor equal")


if __name__ == "__main__":
    main()
