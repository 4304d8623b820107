#!/usr/bin/env python3
"""Tiny random checkpoints of the DeepSeek kinds and their float64 references (ref.json).

The oracle's method (../shared/oracle/README.md) with tools/train-demo/model.py as the forward:
model.py reproduces transformers' glm_moe_dsa (check_glm_tiny.py) and deepseek_v3
(check_glm_tiny.py --model tests/fixtures/deepseek_tiny) oracles. No KV cache: every greedy step
is a full forward. Prompts are random token ids, redrawn until every discrete decision is clear
of a tie (greedy margin >= 0.02, router k-th vs (k+1)-th choice >= 1e-4, DSA boundary >= 1e-4
relative), in every layer including the MTP layer. Writes, under --out (tests/fixtures):

- deepseek_v3_bf16: deepseek_v3 with `q_lora_rank: null` (a plain q_proj), BF16 on disk, YaRN
  (factor 4 over an original context of 32, mscale 1 / mscale_all_dim 0.707: the cos/sin factor
  is not 1), grouped routing (n_group 4, topk_group 2), and an MTP layer at index
  num_hidden_layers with its own embed_tokens / shared_head.head, as DeepSeek-V3 ships layer 61
  (transformers ignores it: the MTP rows are this script's, assembled DeepSeek-V3/vLLM style).
- kimi_k2_tiny: model_type kimi_k2, Kimi-K2's shape: YaRN factor 32 with beta_fast = beta_slow
  = 1, one dense layer, n_group 1, no MTP layer.
- deepseek_v32_tiny: deepseek_v32, an indexer on every layer (split-half indexer RoPE, YaRN on
  both RoPEs), prompts longer than index_topk 8 so most rows are sparse.

Run with the Debian torch: /usr/bin/python3 tools/kind-fixtures/make_kind_fixtures.py
"""
import argparse
import copy
import json
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../train-demo"))
import model as M  # noqa: E402
import st_io  # noqa: E402

MIN_STEP_MARGIN, MIN_ROUTER_GAP, MIN_INDEXER_REL_GAP = 0.02, 1e-4, 1e-4
MAX_ATTEMPTS = 3000

BASE = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "attention_bias": False, "bos_token_id": 0, "eos_token_id": 1, "first_k_dense_replace": 1,
    "hidden_act": "silu", "hidden_size": 64, "intermediate_size": 96, "kv_lora_rank": 16,
    "max_position_embeddings": 128, "moe_intermediate_size": 16, "moe_layer_freq": 1,
    "n_group": 4, "n_routed_experts": 8, "n_shared_experts": 1, "norm_topk_prob": True,
    "num_attention_heads": 4, "num_experts_per_tok": 2, "num_hidden_layers": 3,
    "num_key_value_heads": 4, "num_nextn_predict_layers": 0, "q_lora_rank": 32,
    "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "rms_norm_eps": 1e-6,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 4, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "original_max_position_embeddings": 32,
                     "type": "yarn"},
    "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
    "tie_word_embeddings": False, "topk_group": 2, "topk_method": "noaux_tc",
    "torch_dtype": "bfloat16", "v_head_dim": 12, "vocab_size": 256,
}


def fixture_configs():
    v3 = copy.deepcopy(BASE)
    v3.update({"q_lora_rank": None, "num_nextn_predict_layers": 1})
    v3["rope_scaling"]["mscale_all_dim"] = 0.707
    kimi = copy.deepcopy(BASE)
    kimi.update({"model_type": "kimi_k2", "n_group": 1, "topk_group": 1, "n_routed_experts": 12,
                 "num_experts_per_tok": 3, "max_position_embeddings": 1024})
    kimi["rope_scaling"].update({"factor": 32.0, "beta_fast": 1.0, "beta_slow": 1.0,
                                 "original_max_position_embeddings": 32})
    v32 = copy.deepcopy(BASE)
    v32.update({"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
                "index_topk": 8, "index_head_dim": 16, "index_n_heads": 8, "n_group": 2,
                "topk_group": 1})
    # (name, config, cases: (name, prompt tokens, new tokens))
    return [
        ("deepseek_v3_bf16", v3, [("p5_n8", 5, 8), ("p20_n8", 20, 8), ("p36_n8", 36, 8)]),
        ("kimi_k2_tiny", kimi, [("p6_n8", 6, 8), ("p40_n8", 40, 8)]),
        ("deepseek_v32_tiny", v32, [("p6_n8", 6, 8), ("p20_n8", 20, 8), ("p34_n8", 34, 8)]),
    ]


def g6(x):
    return float(f"{x:.6g}")


def top2_margin(logits):
    t = logits.topk(2, dim=-1).values
    return t[..., 0] - t[..., 1]


def random_model(cfg, gen):
    """model.py's module with random weights rounded to BF16 (the stored values)."""
    m = M.Model(cfg, mtp_local_copies=cfg["num_nextn_predict_layers"] > 0)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("k_norm.bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:
                fan_in = p.shape[-1] if p.dim() > 1 else 1
                std = 1.0 if "embed_tokens" in name else 1.5 / fan_in ** 0.5
                p.copy_(std * torch.randn(p.shape, generator=gen))
        for name, b in m.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.05 * torch.randn(b.shape, generator=gen))
    tensors = {k: v.to(torch.bfloat16).to(torch.float32) for k, v in M.hf_state_dict(m).items()}
    M.load_hf_state_dict(m, tensors)
    return m.to(torch.float64).eval(), tensors


class Reference:
    def __init__(self, cfg, m):
        self.cfg, self.m = cfg, m
        self.K = cfg.get("index_topk")

    @torch.no_grad()
    def greedy(self, prompt, n):
        ids = list(prompt)
        for _ in range(n):
            h, _ = self.m(torch.tensor([ids]), mode="ref")
            ids.append(int(self.m.lm_head(h[0, -1]).argmax()))
        return ids[len(prompt):]

    @torch.no_grad()
    def analyse(self, full):
        ids = torch.tensor([full])
        traces = []
        h, _ = self.m(ids, mode="ref", traces=traces)
        out = {"logits": self.m.lm_head(h)[0], "topk": {}, "experts": {}}
        if self.m.mtp is not None:
            tr = {}
            out["mtp"] = self.m.mtp_forward(h[:, :-1], ids[:, 1:], mode="ref", trace=tr)[0][0]
            out["mtp_masked"] = self.m.mtp_forward(h[:, :-1], ids[:, 1:], mode="ref",
                                                   mask_pos0=True)[0][0]
            traces.append(tr)
        router_gap, indexer_gap, rows = None, None, 0
        for layer, tr in enumerate(traces):
            if "router_gap" in tr:
                router_gap = tr["router_gap"] if router_gap is None else \
                    min(router_gap, tr["router_gap"])
                out["experts"][str(layer)] = tr["experts"].tolist()
            if tr.get("selection") is None:
                continue
            scores, sel = tr["indexer_scores"], []
            for t in range(self.K, scores.shape[0]):
                row = scores[t, : t + 1]
                srt = row.sort(descending=True).values
                rel = float((srt[self.K - 1] - srt[self.K]) / row.abs().max().clamp_min(1e-30))
                indexer_gap = rel if indexer_gap is None else min(indexer_gap, rel)
                rows += 1
                sel.append(tr["selection"][t].nonzero().flatten().tolist())
            out["topk"][str(layer)] = sel
        out["rob"] = {"min_router_gap": router_gap, "min_indexer_rel_gap": indexer_gap,
                      "indexer_rows_checked": rows}
        return out


def clear(rob):
    return (rob["min_router_gap"] is None or rob["min_router_gap"] >= MIN_ROUTER_GAP) and \
        (rob["min_indexer_rel_gap"] is None or rob["min_indexer_rel_gap"] >= MIN_INDEXER_REL_GAP)


def make_case(ref, name, n_prompt, n_new, rng):
    V, eos = ref.cfg["vocab_size"], ref.cfg["eos_token_id"]
    for attempt in range(1, MAX_ATTEMPTS + 1):
        prompt = [rng.randrange(2, V) for _ in range(n_prompt)]
        if not clear(ref.analyse(prompt)["rob"]):  # causal: the prompt's rows decide alike
            continue
        gen = ref.greedy(prompt, n_new)
        if eos in gen:
            continue
        full = prompt + gen
        a = ref.analyse(full)
        margin = top2_margin(a["logits"])
        steps = margin[len(prompt) - 1: len(full) - 1]
        if float(steps.min()) >= MIN_STEP_MARGIN and clear(a["rob"]):
            break
    else:
        sys.exit(f"{name}: no prompt clear of ties in {MAX_ATTEMPTS} attempts")
    K = ref.K if ref.K is not None else len(full)
    case = {
        "name": name, "prompt_ids": prompt, "max_new_tokens": n_new, "generated_ids": gen,
        "full_ids": full, "prompt_dense_equivalent": len(prompt) <= K,
        "dense_equivalent": len(full) <= K, "sparse_rows_from": K,
        "greedy_step_margins": [g6(x) for x in steps.tolist()],
        "tf_pred": a["logits"].argmax(-1).tolist(),
        "margin": [g6(x) for x in margin.tolist()],
        "logits": [[g6(x) for x in row] for row in a["logits"].tolist()],
    }
    if "mtp" in a:
        case.update({
            "mtp_pred": a["mtp"].argmax(-1).tolist(),
            "mtp_margin": [g6(x) for x in top2_margin(a["mtp"]).tolist()],
            "mtp_logits_first8": [[g6(x) for x in row] for row in a["mtp"][:8].tolist()],
            "mtp_pred_pos0_masked": a["mtp_masked"].argmax(-1).tolist()})
    rob = a["rob"]
    case.update({
        "indexer_topk": a["topk"], "experts": a["experts"],
        "robustness": {
            "min_greedy_step_margin": g6(float(steps.min())),
            "min_indexer_rel_gap": None if rob["min_indexer_rel_gap"] is None
            else g6(rob["min_indexer_rel_gap"]),
            "indexer_rows_checked": rob["indexer_rows_checked"],
            "min_router_gap": g6(rob["min_router_gap"])},
        "prompt_attempts": attempt})
    return case


def write_fixture(out_dir, name, cfg, case_specs, seed):
    gen = torch.Generator().manual_seed(seed)
    m, tensors = random_model(cfg, gen)
    ref, rng = Reference(cfg, m), random.Random(seed)
    cases = []
    for case_name, n_prompt, n_new in case_specs:
        c = make_case(ref, case_name, n_prompt, n_new, rng)
        print(f"{name}/{case_name}: {len(c['full_ids'])} tokens, {c['prompt_attempts']} "
              f"attempt(s), {c['robustness']}", flush=True)
        cases.append(c)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    st_io.write_bf16(os.path.join(d, "model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]}, f,
                  indent=2)
    rotary = M.Rotary(cfg)
    about = {
        "produced_by": "tools/kind-fixtures/make_kind_fixtures.py: tools/train-demo/model.py's "
                       "float64 forward (checked against the transformers oracles glm_tiny and "
                       "deepseek_tiny by tools/train-demo/check_glm_tiny.py)",
        "runtime": f"torch {torch.__version__}, CPU",
        "compute_dtype": "float64 end to end (weights: the stored BF16 values, decoded exactly)",
        "weights_dtype_on_disk": "BF16",
        "model_type": cfg["model_type"],
        "deviations": ["no KV cache: every greedy step a full forward",
                       "the MTP layer (when present) DeepSeek-V3/vLLM style, as the glm_tiny "
                       "oracle's; transformers' deepseek_v3 ignores it"],
        "rope_as_computed": {"inv_freq": rotary.inv_freq.tolist(),
                             "attention_factor_cos_sin": rotary.attention_factor,
                             "softmax_mscale_squared": rotary.softmax_multiplier},
        "robustness_thresholds": {"min_greedy_step_margin": MIN_STEP_MARGIN,
                                  "min_indexer_rel_gap": MIN_INDEXER_REL_GAP,
                                  "min_router_gap": MIN_ROUTER_GAP},
        "fixture": {"seed": seed},
    }
    path = os.path.join(d, "ref.json")
    with open(path, "w") as f:
        json.dump({"about": about, "cases": cases}, f, separators=(",", ":"))
    print(f"wrote {d}: ref.json {os.path.getsize(path) / 1e3:.0f} kB, weights "
          f"{os.path.getsize(os.path.join(d, 'model.safetensors')) / 1e3:.0f} kB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "../../tests/fixtures"))
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--only", default=None, help="one fixture name")
    args = ap.parse_args()
    torch.set_num_threads(1)
    for i, (name, cfg, cases) in enumerate(fixture_configs()):
        if args.only in (None, name):
            write_fixture(args.out, name, cfg, cases, args.seed + i)


if __name__ == "__main__":
    main()
