#!/usr/bin/env python3
"""Check that fast_ops.py computes what model.py's einsums and per-expert loop compute: the
trained preset's config, random weights and tokens, float64, both training modes (dense, and
sparse with DSA selection: 64 tokens > index_topk): equal losses and every gradient within
1e-12 of the loop's (relative to the tensor's largest gradient).

  python3 check_fast_ops.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import config as C  # noqa: E402
import model as M  # noqa: E402
import train as T  # noqa: E402

TOLERANCE = 1e-12


def loss_and_grads(m, ids, mode):
    m.zero_grad(set_to_none=True)
    total = T.losses(m, ids, mode, 0.3, 1)[0]
    total.backward()
    return total.item(), {k: p.grad for k, p in m.named_parameters() if p.grad is not None}


def main():
    torch.manual_seed(0)
    cfg = C.trained_config()
    loop = M.Model(cfg).double()
    T.init_weights(loop, cfg["num_hidden_layers"] + 1)
    fast = M.Model(cfg, fast=True).double()
    fast.load_state_dict(loop.state_dict())
    ids = torch.randint(0, cfg["vocab_size"], (2, 66))
    failures = []
    for mode in ("dense", "sparse"):
        la, ga = loss_and_grads(loop, ids, mode)
        lb, gb = loss_and_grads(fast, ids, mode)
        if ga.keys() != gb.keys():
            failures.append(f"{mode}: gradients for different parameters")
            continue
        worst, name = max(((ga[k] - gb[k]).abs().max().item() /
                           max(ga[k].abs().max().item(), 1e-300), k) for k in ga)
        print(f"{mode}: loss {la:.15g} vs {lb:.15g}; worst relative gradient difference "
              f"{worst:.2e} ({name}), {len(ga)} gradients")
        if abs(la - lb) > TOLERANCE * abs(la) or worst > TOLERANCE:
            failures.append(f"{mode}: fast_ops differs from the loop")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("PASS: fast_ops == model.py's loop in both training modes")


if __name__ == "__main__":
    main()
