#!/usr/bin/env python3
"""Quality figures of a glm_moe_dsa model folder (the stored BF16 weights, run in float32).

- held-out perplexity: non-overlapping 256-token windows of the held-out texts, attention as
  inference does it (DSA past index_topk), against a unigram model of the training stream
  (add-one smoothed);
- MTP acceptance: greedy continuations of held-out prompts; the MTP layer drafts from the main
  hidden state at t and the greedy token t+1; draft k (k > 1: the MTP layer chained on its own
  normalised output and previous draft) is accepted when it equals the greedy token t+1+k and
  drafts 1..k-1 were accepted;
- expert usage per MoE layer on the held-out windows: share of the busiest and idlest expert,
  normalised entropy, and the hit rate of a per-layer LRU cache of C experts in token order;
- held-out top-1 (teacher-forced on the real text): the main model's next token, and the MTP
  layer's token t+2 given the true token t+1;
- indexer recall: with dense attention, the fraction of each sparse row's attention mass
  (averaged over heads) that falls on the index_topk keys the indexer selects.
Writes JSON (--out) and prints a summary.
"""
import argparse
import collections
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import check_glm_tiny  # noqa: E402
import data  # noqa: E402


def lru_hit_rate(sequence, capacity):
    cache, hits, total = collections.OrderedDict(), 0, 0
    for experts in sequence:
        for e in experts:
            total += 1
            if e in cache:
                hits += 1
                cache.move_to_end(e)
            else:
                cache[e] = True
                if len(cache) > capacity:
                    cache.popitem(last=False)
    return hits / max(total, 1)


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    ap.add_argument("--model", required=True)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--windows", type=int, default=64, help="held-out windows for perplexity")
    ap.add_argument("--mtp-prompts", type=int, default=24)
    ap.add_argument("--mtp-new", type=int, default=48)
    ap.add_argument("--draft-depth", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(2)
    cfg, m = check_glm_tiny.load(args.model, dtype=torch.float32)
    tok = bpe.Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
    train_docs = data.load_docs(os.path.join(args.work, "corpus/train.jsonl"))
    held_docs = data.load_docs(os.path.join(args.work, "corpus/heldout.jsonl"))
    eot = tok.special["<|endoftext|>"]
    held = [t for d in held_docs for t in tok.encode(data.doc_text(d)) + [eot]]
    W, K, V = args.window, cfg["index_topk"], cfg["vocab_size"]
    n_win = min(args.windows, len(held) // W)
    # Evenly spaced windows over the whole held-out stream (every genre is represented).
    step = len(held) // n_win
    windows = [held[i * step: i * step + W] for i in range(n_win)]
    res = {}

    # Unigram baseline from the training stream (texts only), add-one smoothing.
    counts = np.ones(V)
    for d in train_docs:
        for t in tok.encode(data.doc_text(d)) + [eot]:
            counts[t] += 1
    logp_uni = np.log(counts / counts.sum())
    nll, n_tok, uni = 0.0, 0, 0.0
    main_hits = mtp_hits = 0
    moe_layers = [i for i, layer in enumerate(m.layers) if hasattr(layer.mlp, "gate")]
    usage = {i: np.zeros(cfg["n_routed_experts"]) for i in moe_layers}
    routed = {i: [] for i in moe_layers}
    recall = collections.defaultdict(list)
    for w in windows:
        ids = torch.tensor([w])
        traces = []
        h, _ = m(ids[:, :-1], mode="ref", traces=traces)
        logp = F.log_softmax(m.lm_head(h)[0], -1)
        tgt = ids[0, 1:]
        nll -= float(logp.gather(1, tgt[:, None]).sum())
        uni -= float(sum(logp_uni[t] for t in tgt.tolist()))
        n_tok += len(tgt)
        # Teacher-forced on the real text: main top-1 for t+1, MTP top-1 for t+2 given t+1.
        main_hits += int((logp.argmax(-1) == tgt).sum())
        mtp_logits, _ = m.mtp_forward(h[:, :-1], ids[:, 1:-1], mode="ref")
        mtp_hits += int((mtp_logits[0].argmax(-1) == ids[0, 2:]).sum())
        for layer in moe_layers[:-1] if moe_layers[-1] == cfg["num_hidden_layers"] else moe_layers:
            ex = traces[layer]["experts"]
            usage[layer] += np.bincount(ex.flatten().numpy(), minlength=len(usage[layer]))
            routed[layer] += [tuple(r) for r in ex.tolist()]
        # Indexer recall: dense attention mass on the indexer's selection.
        dtr = []
        m(ids[:, :-1], mode="dense", traces=dtr)
        for layer, tr in enumerate(dtr):
            if tr.get("selection") is None:
                continue
            p = tr["probs"].mean(0)  # [S, S], heads averaged
            sel = tr["selection"]
            rows = torch.arange(K, p.shape[0])
            recall[layer].append(float((p[rows] * sel[rows]).sum(-1).mean()))
    res["perplexity"] = {"heldout_tokens": n_tok, "model": math.exp(nll / n_tok),
                         "unigram": math.exp(uni / n_tok), "window": W}
    res["heldout_top1"] = {"main_next_token": main_hits / n_tok,
                           "mtp_token_after_next": mtp_hits / (n_tok - len(windows))}
    res["indexer_recall"] = {str(k): float(np.mean(v)) for k, v in recall.items()}

    skew = {}
    for layer in usage:
        if usage[layer].sum() == 0:
            continue
        share = usage[layer] / usage[layer].sum()
        ent = -float((share[share > 0] * np.log(share[share > 0])).sum()) / math.log(len(share))
        skew[str(layer)] = {
            "max_share": float(share.max()), "min_share": float(share.min()),
            "max_over_mean": float(share.max() * len(share)),
            "normalised_entropy": ent,
            "top4_share": float(np.sort(share)[::-1][:4].sum()),
            "lru_hit_rate": {str(c): lru_hit_rate(routed[layer], c) for c in (4, 8, 12)},
        }
    res["expert_usage"] = skew

    # MTP acceptance on greedy continuations.
    depth = args.draft_depth
    accepted = np.zeros(depth)
    tried = np.zeros(depth)
    rng = np.random.default_rng(7)
    mtp = m.mtp
    for p in range(args.mtp_prompts):
        start = int(rng.integers(0, len(held) - 64))
        ids = list(held[start:start + 32])
        for _ in range(args.mtp_new):
            h, _ = m(torch.tensor([ids]), mode="ref")
            ids.append(int(m.lm_head(h[0, -1]).argmax()))
        x = torch.tensor([ids])
        h, _ = m(x, mode="ref")
        greedy = ids  # tokens 32.. are the model's own greedy choices
        hid, tokens = h[:, :-1], x[:, 1:]  # depth 1 at t: (h_t, token t+1) -> t+2
        ok = torch.ones(len(ids) - 1, dtype=torch.bool)
        for k in range(depth):
            logits, _ = m.mtp_forward(hid, tokens, mode="ref")
            draft = logits[0].argmax(-1)  # draft at t for token t+2+k
            # Positions t whose draft targets are greedy tokens inside the sequence.
            for t in range(31, len(ids) - 2 - k):
                if ok[t]:
                    tried[k] += 1
                    hit = int(draft[t]) == greedy[t + 2 + k]
                    accepted[k] += hit
                    ok[t] = hit
            # Chain: the MTP layer's normalised output and its draft feed the next depth.
            out = mtp.shared_head.norm(_mtp_hidden(m, hid, tokens))
            hid, tokens = out, draft[None]
    res["mtp_acceptance"] = {
        "per_draft_position": [float(a / max(t, 1)) for a, t in zip(accepted, tried)],
        "tried": tried.tolist(),
        "expected_tokens_per_step": float(1 + sum(np.prod([a / max(t, 1) for a, t in
                                                            zip(accepted[:k + 1],
                                                                tried[:k + 1])])
                                                  for k in range(depth))),
    }
    out = args.out or os.path.join(args.work, "eval.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=2)
    print(json.dumps(res, indent=2))


def _mtp_hidden(m, h_main, next_ids):
    """The MTP decoder layer's output hidden state (before shared_head.norm)."""
    mt = m.mtp
    emb = m.embed_tokens(next_ids)
    x = mt.eh_proj(torch.cat((mt.enorm(emb), mt.hnorm(h_main)), -1))
    positions = torch.arange(next_ids.shape[1])
    h, _, _ = type(mt).__mro__[1].forward(mt, x, positions, "ref", None, None)
    return h


if __name__ == "__main__":
    main()
