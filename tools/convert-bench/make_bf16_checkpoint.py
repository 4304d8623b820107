#!/usr/bin/env python3
"""A multi-GB BF16 checkpoint for timing `glmrt convert` (no numpy needed).

    make_bf16_checkpoint.py OUT_DIR [--experts N] [--hidden D] [--inter I] [--shards S]

Writes config.json (num_hidden_layers 2) and S shards holding N routed experts
of layer 1 (gate/up [I, D], down [D, I]) in GLM-5's dimensions by default
(D 6144, I 2048: 75 MB of BF16 per expert), with finite pseudo-random values
(|w| < 2), plus a norm. Only the convert speed is measured on it: it is not a
runnable model. The page cache is told to drop the files afterwards, so a
conversion reads them from the drive.
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
            tensors.append(("model.layers.0.input_layernorm.weight", [a.hidden]))
        name = f"model-{s + 1:05d}-of-{a.shards:05d}.safetensors"
        total += write_shard(os.path.join(a.out, name), tensors, block)
        weight_map.update({t: name for t, _ in tensors})
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({"num_hidden_layers": 2, "hidden_size": a.hidden,
                   "moe_intermediate_size": a.inter}, f)
    print(f"wrote {a.out}: {total / 1e9:.2f} GB of BF16")


if __name__ == "__main__":
    main()
