#!/usr/bin/env python3
"""Train the demo GLM-5-architecture model on the Brown Corpus (float32, CPU).

Objectives:
- next-token cross-entropy of the main model;
- MTP: cross-entropy of the MTP layer's prediction of token t+2 (weight --mtp-weight);
- DSA indexer: KL(main attention, summed over heads and detached || softmax of indexer scores),
  plus a hinge keeping each key's best head dot product positive (model.py: no exact-zero
  scores, so no ties at the top-k boundary); the indexer's inputs are detached, so this loss
  trains only the indexer and the LM loss only the rest. The first --dense-frac of the steps attend densely (the indexer "warm-up"); the rest
  attend only to the keys the indexer selects (rows past index_topk), as inference does, with the
  KL restricted to the selected keys (DeepSeek-V3.2's sparse stage);
- routing: sigmoid scores, top-k chosen on score + e_score_correction_bias; after every step the
  bias of each expert moves by --bias-rate towards balance (DeepSeek-V3 aux-loss-free: +rate when
  the expert got fewer tokens than the mean in that layer, -rate when more).

Everything is seeded; the same command on the same torch build gives the same weights.
Every --resume-every steps WORK/resume.pt saves the whole training state (checkpoint.py); the same
command run again resumes from it, and the weights come out as an uninterrupted run's.
--preset picks the model (config.py PRESETS: the bundled demo, or issue 25's larger `trained`).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import config as C  # noqa: E402
import checkpoint as ckpt  # noqa: E402
import data  # noqa: E402
import model as M  # noqa: E402


def init_weights(m, n_layers):
    for name, p in m.named_parameters():
        if p.dim() == 2:
            std = 0.02
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                std /= math.sqrt(2 * n_layers)
            torch.nn.init.normal_(p, 0.0, std)


def batch_windows(stream, starts, length):
    return torch.from_numpy(np.stack([stream[s:s + length] for s in starts]).astype(np.int64))


def losses(m, ids, mode, mtp_weight, mtp_rows=None):
    """ids [B, S+2] -> (total, lm, mtp, indexer kl). The MTP layer sees the first mtp_rows
    sequences only (half the batch in training: its loss needs fewer samples, and the lm_head
    it shares is the largest matmul)."""
    x, y, y2 = ids[:, :-2], ids[:, 1:-1], ids[:, 2:]
    h, kls = m(x, mode=mode)
    V = m.cfg["vocab_size"]
    lm = F.cross_entropy(m.lm_head(h).view(-1, V), y.reshape(-1))
    r = mtp_rows or ids.shape[0]
    mtp_logits, mtp_kl = m.mtp_forward(h[:r], y[:r], mode=mode)
    mtp = F.cross_entropy(mtp_logits.reshape(-1, V), y2[:r].reshape(-1))
    kl = torch.stack(kls + [mtp_kl]).mean()
    return lm + mtp_weight * mtp + kl, lm, mtp, kl


def update_bias(m, rate):
    for layer in m.layers:
        moe = layer.mlp
        if isinstance(moe, M.MoE) and moe.last_load is not None:
            load = moe.last_load.float()
            moe.gate.e_score_correction_bias += rate * torch.sign(load.mean() - load)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    ap.add_argument("--preset", choices=sorted(C.PRESETS), default="demo",
                    help="model config and run length (config.py PRESETS)")
    ap.add_argument("--steps", type=int, default=None, help="default: the preset's")
    ap.add_argument("--batch", type=int, default=None, help="default: the preset's")
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--dense-frac", type=float, default=0.6)
    ap.add_argument("--mtp-weight", type=float, default=0.3)
    ap.add_argument("--bias-rate", type=float, default=3e-3)
    ap.add_argument("--chat-per-doc", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--out", default=None, help="checkpoint path (default WORK/ckpt.pt)")
    ap.add_argument("--resume-every", type=int, default=25,
                    help="write WORK/resume.pt (everything a resumed run needs) every N steps")
    ap.add_argument("--stop-after", type=int, default=None,
                    help="leave after this many steps in total, resume.pt written (tests)")
    args = ap.parse_args()
    preset = C.PRESETS[args.preset]
    args.steps = preset["steps"] if args.steps is None else args.steps
    args.batch = preset["batch"] if args.batch is None else args.batch
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    tok = bpe.Tokenizer.from_file(os.path.join(args.work, "tokenizer.json"))
    train_docs = data.load_docs(os.path.join(args.work, "corpus/train.jsonl"))
    held_docs = data.load_docs(os.path.join(args.work, "corpus/heldout.jsonl"))
    ids, chat_tokens = data.build_stream(tok, train_docs, args.seed, args.chat_per_doc)
    stream = np.array(ids, dtype=np.int32)
    eot = tok.special["<|endoftext|>"]
    held = np.array([t for d in held_docs for t in tok.encode(data.doc_text(d)) + [eot]],
                    dtype=np.int32)
    print(f"train stream {len(stream)} tokens ({chat_tokens} in chat examples), "
          f"held-out {len(held)} tokens", flush=True)

    cfg = preset["config"]()
    m = M.Model(cfg, fast=preset["fast"])
    init_weights(m, cfg["num_hidden_layers"] + 1)
    n_params = sum(p.numel() for p in m.parameters())
    print(f"parameters: {n_params / 1e6:.2f} M", flush=True)
    decay = [p for p in m.parameters() if p.dim() == 2]
    no_decay = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    L = args.seq + 2
    eval_starts = np.random.default_rng(1).integers(0, len(held) - L, 12)
    dense_steps = int(args.dense_frac * args.steps)
    resume_path = os.path.join(args.work, "resume.pt")
    first_step, log, seconds_before = 0, [], 0.0
    if os.path.exists(resume_path):
        first_step, log, seconds_before = ckpt.restore(resume_path, args, cfg, m, opt, rng)
        print(f"resumed from {resume_path} at step {first_step}", flush=True)
    t0 = time.time() - seconds_before
    for step in range(first_step, args.steps):
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * \
            (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        mode = "dense" if step < dense_steps else "sparse"
        batch = batch_windows(stream, rng.integers(0, len(stream) - L, args.batch), L)
        total, lm, mtp, kl = losses(m, batch, mode, args.mtp_weight, max(1, args.batch // 2))
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            update_bias(m, args.bias_rate)
        if step % 10 == 0:
            print(f"step {step} {mode} lr {lr:.2e} lm {lm.item():.3f} mtp {mtp.item():.3f} "
                  f"kl {kl.item():.3f} {time.time() - t0:.0f}s", flush=True)
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            m.eval()
            with torch.no_grad():
                ev = [losses(m, batch_windows(held, eval_starts[i:i + 6], L), "sparse", 0.0)
                      for i in range(0, len(eval_starts), 6)]
            m.train()
            e = {k: float(np.mean([v[i].item() for v in ev])) for i, k in
                 enumerate(("total", "lm", "mtp", "kl"))}
            e.update(step=step + 1, seconds=time.time() - t0)
            log.append(e)
            torch.save({"config": cfg, "state": m.state_dict(), "step": step + 1},
                       os.path.join(args.work, "ckpt-partial.pt"))
            print(f"eval step {step + 1}: held-out lm {e['lm']:.3f} (ppl {math.exp(e['lm']):.1f})"
                  f" mtp {e['mtp']:.3f} kl {e['kl']:.3f}", flush=True)
        done = step + 1
        if done % args.resume_every == 0 or done == args.steps or done == args.stop_after:
            ckpt.save(resume_path, args, cfg, m, opt, rng, done, log, time.time() - t0)
        if done == args.stop_after:
            print(f"stopped after step {done}; {resume_path} resumes it", flush=True)
            return
    out = args.out or os.path.join(args.work, "ckpt.pt")
    torch.save({"config": cfg, "state": m.state_dict(), "args": vars(args), "log": log,
                "train_seconds": time.time() - t0}, out)
    print(f"saved {out} after {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
