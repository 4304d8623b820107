"""Minimal safetensors reader/writer (F32, BF16), single file or sharded with an index."""
import json
import os
import struct

import numpy as np
import torch

_DTYPES = {"F32": (np.float32, 4), "BF16": (np.uint16, 2), "F64": (np.float64, 8)}


def read_file(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        np_dtype, _ = _DTYPES[info["dtype"]]
        arr = np.frombuffer(data[a:b], dtype=np_dtype).reshape(info["shape"])
        if info["dtype"] == "BF16":  # exact: bf16 is the top half of an f32
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = torch.from_numpy(arr.copy())
    return out


def read_dir(model_dir):
    """Every tensor of a checkpoint folder (model.safetensors or an index + shards)."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        shards = sorted(set(json.load(open(index))["weight_map"].values()))
        out = {}
        for s in shards:
            out.update(read_file(os.path.join(model_dir, s)))
        return out
    return read_file(os.path.join(model_dir, "model.safetensors"))


def to_bf16_bits(t):
    """float32 tensor -> uint16 bf16 bits, round to nearest even (as torch's .bfloat16())."""
    return t.detach().to(torch.float32).contiguous().to(torch.bfloat16).view(torch.int16) \
        .numpy().view(np.uint16)


def write_bf16(path, tensors, metadata=None):
    """Write tensors (name -> float tensor) as BF16, names sorted, offsets 8-aligned."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        bits = to_bf16_bits(tensors[name]).tobytes()
        header[name] = {"dtype": "BF16", "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(bits)]}
        blobs.append(bits)
        off += len(bits)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
