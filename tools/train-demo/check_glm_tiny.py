#!/usr/bin/env python3
"""Cross-check model.py's float64 forward against the transformers oracle of glm_tiny.

Loads tests/fixtures/glm_tiny (F32 weights, layer-local MTP embed/head, split-half indexer RoPE)
into model.Model in float64 and compares with its ref.json: logits at every position, the
teacher-forced argmax, the MTP predictions, the DSA selections and the routed experts.
Passing this shows model.py implements the same function as transformers' glm_moe_dsa.
`--model tests/fixtures/deepseek_tiny` checks the deepseek_v3 kind the same way (no MTP layer,
no indexer: YaRN RoPE, grouped routing) against the transformers deepseek_v3 oracle.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as M  # noqa: E402
import st_io  # noqa: E402


def load(model_dir, dtype=torch.float64):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    tensors = st_io.read_dir(model_dir)
    local = any(k.endswith("shared_head.head.weight") for k in tensors)
    m = M.Model(cfg, mtp_local_copies=local)
    M.load_hf_state_dict(m, tensors)
    return cfg, m.to(dtype).eval()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(here, "../../tests/fixtures/glm_tiny"))
    args = ap.parse_args()
    cfg, m = load(args.model)
    ref = json.load(open(os.path.join(args.model, "ref.json")))
    worst = worst_mtp = 0.0
    ok = True
    with torch.no_grad():
        for c in ref["cases"]:
            ids = torch.tensor([c["full_ids"]])
            traces = []
            h, _ = m(ids, mode="ref", traces=traces)
            logits = m.lm_head(h)[0]
            want = torch.tensor(c["logits"], dtype=torch.float64)
            # ref logits carry 6 significant digits: compare relative to that rounding.
            d = ((logits - want).abs() / want.abs().clamp_min(1.0)).max().item()
            worst = max(worst, d)
            tf_ok = logits.argmax(-1).tolist() == c["tf_pred"]
            mtp_ok = masked_ok = True
            dm = 0.0
            if m.mtp is not None or "mtp_pred" in c:
                mtp_logits, _ = m.mtp_forward(h[:, :-1], ids[:, 1:], mode="ref")
                mtp_ok = mtp_logits[0].argmax(-1).tolist() == c["mtp_pred"]
                first8 = torch.tensor(c["mtp_logits_first8"], dtype=torch.float64)
                dm = ((mtp_logits[0, : len(first8)] - first8).abs() /
                      first8.abs().clamp_min(1.0)).max().item()
                worst_mtp = max(worst_mtp, dm)
                masked, _ = m.mtp_forward(h[:, :-1], ids[:, 1:], mode="ref", mask_pos0=True)
                masked_ok = masked[0].argmax(-1).tolist() == c["mtp_pred_pos0_masked"]
            sel_ok = exp_ok = True
            for layer, tr in enumerate(traces):
                if tr.get("selection") is not None and str(layer) in c["indexer_topk"]:
                    got = [tr["selection"][t].nonzero().flatten().tolist()
                           for t in range(cfg["index_topk"], len(c["full_ids"]))]
                    sel_ok &= got == c["indexer_topk"][str(layer)]
                if "experts" in tr:
                    exp_ok &= tr["experts"].tolist() == c["experts"][str(layer)]
            good = tf_ok and mtp_ok and masked_ok and sel_ok and exp_ok and d < 1e-5
            ok &= good
            print(f"{c['name']:10s} max rel dlogit {d:.2e}  tf_pred {tf_ok}  mtp {mtp_ok} "
                  f"(pos0 masked {masked_ok}, first8 max rel diff {dm:.1e})  indexer {sel_ok}  "
                  f"experts {exp_ok}")
    print(f"{'PASS' if ok else 'FAIL'}: worst logit difference {worst:.2e} (relative to "
          f"max(1,|logit|); ref.json rounds to 6 significant digits)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
