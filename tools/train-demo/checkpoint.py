"""Resumable training: everything train.py needs to continue a run exactly where it stopped.

resume.pt holds the model (parameters and the routers' correction-bias buffers), the AdamW
state, the number of steps done, torch's and numpy's RNG states (numpy's draws the batch
windows, so its state is the data position), the eval log and the seconds trained so far. It is
written to a temporary name and renamed, so a run killed mid-write leaves the previous one
intact. A resumed run computes bit for bit what the uninterrupted run would have (same torch
build and thread count), so the arguments that shape the computation must match the saved ones.
"""
import os

import torch

# Arguments that change what a step computes; the others (paths, eval and checkpoint cadence)
# may differ between the first run and a resumed one.
RESULT_ARGS = ("preset", "steps", "batch", "seq", "lr", "warmup", "dense_frac", "mtp_weight",
               "bias_rate", "chat_per_doc", "seed", "threads")


def save(path, args, cfg, model, opt, rng, steps_done, log, seconds):
    state = {
        "config": cfg,
        "args": {k: getattr(args, k) for k in RESULT_ARGS},
        "step": steps_done,
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "numpy_rng": rng.bit_generator.state,
        "log": log,
        "seconds": seconds,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def restore(path, args, cfg, model, opt, rng):
    """Load `path` into model, opt and rng; returns (steps done, eval log, seconds so far)."""
    state = torch.load(path)
    if state["config"] != cfg:
        raise SystemExit(f"{path}: saved for another model config (preset {state['args']['preset']}"
                         f", this run {args.preset}); move it away to start afresh")
    for k in RESULT_ARGS:
        if state["args"][k] != getattr(args, k):
            raise SystemExit(f"{path}: saved with --{k.replace('_', '-')} {state['args'][k]}, "
                             f"this run has {getattr(args, k)}; resuming needs the same value")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    rng.bit_generator.state = state["numpy_rng"]
    return state["step"], state["log"], state["seconds"]
