#!/usr/bin/env python3
"""A multi-GB BF16 checkpoint for timing `glmrt convert` (no numpy needed).

    make_bf16_checkpoint.py OUT_DIR [--experts N] [--hidden D] [--inter I] [--shards S]

Writes config.json and S shards of a two-layer glm_moe_dsa model in GLM-5's
dimensions by default (D 6144, I 2048): layer 1 holds N routed experts
(gate/up [I, D], down [D, I]: 75 MB of BF16 per expert) and a shared expert of
the same size; attention, the dense layer 0, the embeddings and lm_head are
tiny (vocab 64, one head, ranks of 64), so the bytes are the experts'. Values
are finite pseudo-random (|w| < 2). Convert refuses a checkpoint whose
container would not load, so every tensor the config implies is there; the
model runs but says nothing. The page cache is told to drop the files
afterwards, so a conversion reads them from the drive.
"""
import argparse
import json
import os
import struct


def finite_bf16_block(size):
    raw = os.urandom(size)
    # Keep sign and the lower exponent bits: every value finite, below 2.
    table = bytes((b & 0xBF) for b in range(256))
    return raw.translate(table)


def write_shard(path, tensors, block):
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors:
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        left = offset
        while left:
            chunk = block[: min(len(block), left)]
            f.write(chunk)
            left -= len(chunk)
        f.flush()
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return offset


# Small dimensions of everything but the experts.
VOCAB, RANK, ROPE, HEAD, DENSE_INTER = 64, 64, 8, 8, 64


def config_of(a):
    return {
        "model_type": "glm_moe_dsa", "vocab_size": VOCAB, "hidden_size": a.hidden,
        "intermediate_size": DENSE_INTER, "moe_intermediate_size": a.inter,
        "num_hidden_layers": 2, "num_attention_heads": 1, "n_shared_experts": 1,
        "n_routed_experts": a.experts, "routed_scaling_factor": 2.5, "kv_lora_rank": RANK,
        "q_lora_rank": RANK, "qk_rope_head_dim": ROPE, "qk_nope_head_dim": HEAD,
        "v_head_dim": HEAD, "n_group": 1, "topk_group": 1,
        "num_experts_per_tok": min(8, a.experts), "norm_topk_prob": True,
        "mlp_layer_types": ["dense", "sparse"], "hidden_act": "silu",
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "index_topk": 8, "index_head_dim": HEAD, "index_n_heads": 1,
        "indexer_types": ["full", "full"], "num_nextn_predict_layers": 0,
        "tie_word_embeddings": False,
    }


def layer_tensors(layer, a):
    """Every tensor of decoder layer `layer` but its routed experts."""
    D, p = a.hidden, f"model.layers.{layer}."
    t = [(p + "input_layernorm.weight", [D]), (p + "post_attention_layernorm.weight", [D]),
         (p + "self_attn.q_a_proj.weight", [RANK, D]),
         (p + "self_attn.q_a_layernorm.weight", [RANK]),
         (p + "self_attn.q_b_proj.weight", [HEAD + ROPE, RANK]),
         (p + "self_attn.kv_a_proj_with_mqa.weight", [RANK + ROPE, D]),
         (p + "self_attn.kv_a_layernorm.weight", [RANK]),
         (p + "self_attn.kv_b_proj.weight", [2 * HEAD, RANK]),
         (p + "self_attn.o_proj.weight", [D, HEAD]),
         (p + "self_attn.indexer.wq_b.weight", [HEAD, RANK]),
         (p + "self_attn.indexer.wk.weight", [HEAD, D]),
         (p + "self_attn.indexer.weights_proj.weight", [1, D]),
         (p + "self_attn.indexer.k_norm.weight", [HEAD]),
         (p + "self_attn.indexer.k_norm.bias", [HEAD])]
    mlp, width = (p + "mlp.", DENSE_INTER) if layer == 0 else (p + "mlp.shared_experts.", a.inter)
    t += [(mlp + "gate_proj.weight", [width, D]), (mlp + "up_proj.weight", [width, D]),
          (mlp + "down_proj.weight", [D, width])]
    if layer == 1:
        t += [(p + "mlp.gate.weight", [a.experts, D]),
              (p + "mlp.gate.e_score_correction_bias", [a.experts])]
    return t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--experts", type=int, default=48)
    p.add_argument("--hidden", type=int, default=6144)
    p.add_argument("--inter", type=int, default=2048)
    p.add_argument("--shards", type=int, default=4)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    block = finite_bf16_block(64 << 20)
    per_shard = (a.experts + a.shards - 1) // a.shards
    weight_map, total = {}, 0
    for s in range(a.shards):
        tensors = []
        for e in range(s * per_shard, min(a.experts, (s + 1) * per_shard)):
            base = f"model.layers.1.mlp.experts.{e}."
            tensors += [(base + "gate_proj.weight", [a.inter, a.hidden]),
                        (base + "up_proj.weight", [a.inter, a.hidden]),
                        (base + "down_proj.weight", [a.hidden, a.inter])]
        if s == 0:
            tensors += [("model.embed_tokens.weight", [VOCAB, a.hidden]),
                        ("model.norm.weight", [a.hidden]),
                        ("lm_head.weight", [VOCAB, a.hidden])]
            tensors += layer_tensors(0, a) + layer_tensors(1, a)
        name = f"model-{s + 1:05d}-of-{a.shards:05d}.safetensors"
        total += write_shard(os.path.join(a.out, name), tensors, block)
        weight_map.update({t: name for t, _ in tensors})
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config_of(a), f, indent=2)
    print(f"wrote {a.out}: {total / 1e9:.2f} GB of BF16")


if __name__ == "__main__":
    main()
