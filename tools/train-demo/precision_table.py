#!/usr/bin/env python3
"""Quality of glmrt at each weight precision on the demo model, measured by glmrt itself.

For each precision (f32, bf16, int8, int4, int2 for both the dense part and the experts, kernels
`auto`, caches f32) and for each shipped profile (configs/*.yaml), runs `glmrt validate --json`
against the model's ref.json (float64 reference: mean KL, same-top-1 incl. the MTP head,
max |dlogit|, greedy agreement) and against a perplexity file built here: held-out windows whose
"reference logits" are one-hot on the true next token (0 there, -1e4 elsewhere), so that
validate's mean KL(ref || glmrt) is exactly glmrt's cross-entropy on the held-out text and its
top-1 is next-token accuracy. Prints a markdown table; --json writes everything.
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
import check_glm_tiny  # noqa: E402
import data  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
PROFILE = """plugins:
  kernels: auto
  io: io-buffered
  draft: none
threads: 0
precision:
  dense: {p}
  experts: {p}
  kv_cache: f32
memory:
  budget: 0
  expert_cache: 16
  max_context: 4096
"""


def perplexity_ref(model_dir, work, windows, length, path):
    tok = bpe.Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    held = data.load_docs(os.path.join(work, "corpus/heldout.jsonl"))
    eot = tok.special["<|endoftext|>"]
    stream = [t for d in held for t in tok.encode(data.doc_text(d)) + [eot]]
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    V = cfg["vocab_size"]
    step = len(stream) // windows
    with open(path, "w") as f:
        f.write('{"cases":[')
        for w in range(windows):
            ids = stream[w * step: w * step + length + 1]
            rows = []
            for t in range(length):
                row = ["-1e4"] * V
                row[ids[t + 1]] = "0"
                rows.append("[" + ",".join(row) + "]")
            case = {"name": f"w{w}", "prompt_ids": ids[:length], "generated_ids": [],
                    "full_ids": ids[:length], "tf_pred": ids[1:length + 1],
                    "margin": [1e4] * length, "dense_equivalent": False,
                    # the MTP head's "reference" is the true token t+2: its top-1 becomes the
                    # MTP accuracy on real text
                    "mtp_pred": ids[2:length + 1], "mtp_margin": [1e4] * (length - 1),
                    "sparse_rows_from": cfg["index_topk"]}
            head = json.dumps(case)[:-1]
            f.write(("," if w else "") + head + ',"logits":[' + ",".join(rows) + "]}")
        f.write("]}")


def validate(glmrt, profile, model, ref, extra=()):
    out = subprocess.run([glmrt, "validate", "--profile", profile, "--model", model, "--ref", ref,
                          "--json", *extra], capture_output=True, text=True)
    if not out.stdout.strip():
        raise SystemExit(f"glmrt validate failed: {out.stderr}")
    return json.loads(out.stdout)


def python_perplexity(model_dir, ref_path):
    """The same windows through model.py's float64 forward (sparse attention as inference)."""
    import torch
    import torch.nn.functional as F
    _, m = check_glm_tiny.load(model_dir)
    cases = json.load(open(ref_path))["cases"]
    nll = n = 0
    with torch.no_grad():
        for c in cases:
            ids = torch.tensor([c["full_ids"]])
            h, _ = m(ids, mode="ref")
            logp = F.log_softmax(m.lm_head(h)[0], -1)
            nll -= float(logp.gather(1, torch.tensor(c["tf_pred"])[:, None]).sum())
            n += len(c["tf_pred"])
    return math.exp(nll / n)


def summarise(report):
    cases = report["cases"]
    return {
        "pass": report["pass"],
        "min_top1": min(c["top1_agree"] for c in cases),
        "min_mtp_top1": min((c["mtp_top1_agree"] for c in cases if c["mtp_checked"]),
                            default=None),
        "max_kl": max(c["mean_kl"] for c in cases),
        "mean_kl": sum(c["mean_kl"] for c in cases) / len(cases),
        "max_dlogit": max(c["max_abs_dlogit"] for c in cases),
        "greedy": f"{sum(c['greedy_identical'] for c in cases)}/"
                  f"{sum(c['greedy_total'] for c in cases)}",
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models/glm-demo"))
    ap.add_argument("--glmrt", default=os.path.join(ROOT, "build/glmrt"))
    ap.add_argument("--windows", type=int, default=8)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="glm-demo-precision-")
    ppl_ref = os.path.join(tmp, "perplexity.json")
    perplexity_ref(args.model, args.work, args.windows, args.length, ppl_ref)
    ref = os.path.join(args.model, "ref.json")
    loose = ["--min-top1", "0", "--max-kl", "1e9", "--max-dlogit", "1e9"]
    rows = []
    profiles = [(f"{p} (kernels auto)", None, p) for p in ("f32", "bf16", "int8", "int4", "int2")]
    profiles += [(os.path.basename(p), p, None) for p in sorted(glob.glob(
        os.path.join(ROOT, "configs/*.yaml")))]
    for label, path, precision in profiles:
        if path is None:
            path = os.path.join(tmp, f"{precision}.yaml")
            with open(path, "w") as f:
                f.write(PROFILE.format(p=precision))
        r = summarise(validate(args.glmrt, path, args.model, ref, loose))
        p = validate(args.glmrt, path, args.model, ppl_ref, loose)
        ce = sum(c["mean_kl"] for c in p["cases"]) / len(p["cases"])
        r["perplexity"] = math.exp(ce)
        r["next_token_accuracy"] = sum(c["top1_agree"] for c in p["cases"]) / len(p["cases"])
        r["mtp_accuracy"] = sum(c["mtp_top1_agree"] for c in p["cases"]) / len(p["cases"])
        r["profile"] = label
        rows.append(r)
        print(f"{label}: {r}", file=sys.stderr, flush=True)
    ref_ppl = python_perplexity(args.model, ppl_ref)
    print(f"held-out perplexity over {args.windows} windows of {args.length} tokens; the same "
          f"windows through tools/train-demo/model.py in float64: {ref_ppl:.2f}\n")
    print("| profile | mean KL | worst case KL | same top-1 (worst case) | MTP top-1 (worst) | "
          "max abs dlogit | greedy identical | perplexity | next-token accuracy | MTP accuracy (t+2) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['profile']} | {r['mean_kl']:.2e} | {r['max_kl']:.2e} | {r['min_top1']:.4f} | "
              f"{r['min_mtp_top1']:.4f} | {r['max_dlogit']:.3g} | {r['greedy']} | "
              f"{r['perplexity']:.2f} | {r['next_token_accuracy']:.4f} | {r['mtp_accuracy']:.4f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
