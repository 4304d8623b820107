#!/usr/bin/env python3
"""Write a trained checkpoint as a Hugging Face glm_moe_dsa model folder (BF16 safetensors).

OUT gets model.safetensors (every tensor BF16, HF names, the MTP layer at index
num_hidden_layers without layer-local embed/head copies, as real GLM-5 releases), config.json,
generation_config.json, tokenizer.json and tokenizer_config.json.
"""
import argparse
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as M  # noqa: E402
import st_io  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="work")
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    ck = torch.load(args.ckpt or os.path.join(args.work, "ckpt.pt"))
    cfg = ck["config"]
    m = M.Model(cfg)
    m.load_state_dict(ck["state"])
    os.makedirs(args.out, exist_ok=True)
    st_io.write_bf16(os.path.join(args.out, "model.safetensors"), M.hf_state_dict(m),
                     metadata={"format": "pt"})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    gen = {"_from_model_config": True, "bos_token_id": cfg["bos_token_id"],
           "eos_token_id": cfg["eos_token_id"], "pad_token_id": cfg["pad_token_id"],
           "do_sample": True, "temperature": 0.8, "top_p": 0.95}
    with open(os.path.join(args.out, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)
        f.write("\n")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(args.work, name), os.path.join(args.out, name))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
