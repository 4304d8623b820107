"""Faster forms of model.py's training-time operations, for the larger `trained` preset.

Each computes the same function as the einsum / per-expert loop it replaces, but rounds
differently (sums in another order), so model.py uses them only when a model was built with
`fast=True` and never in mode "ref": the float64 reference forward (check_glm_tiny.py,
make_ref.py) and the demo preset's training stay exactly as they were.

Why they are faster (profiled on 2 cores, `--preset trained`): Debian's CPU torch runs the
einsums' batched matmuls on permuted, non-contiguous operands through a slow path (the MLA
score einsum was ~5x slower than the same product on contiguous [B, H, S, d] operands); the
indexer's head-weighted sum became 4096 tiny matmuls; and the MoE loop gathered and
scattered once per expert (nonzero + index + index_add, each with its backward).
"""
import torch


def mla_scores(q_nope, q_pe, k_nope, k_pe):
    """q_nope [B,S,H,n], q_pe [B,S,H,r], k_nope [B,T,H,n], k_pe [B,T,r] -> [B,H,S,T]:
    one matmul over the concatenated nope and rope parts (the same dot product)."""
    B, T, H, _ = k_nope.shape
    q = torch.cat((q_nope, q_pe), -1).transpose(1, 2).contiguous()  # [B,H,S,n+r]
    k_pe = k_pe[:, :, None].expand(B, T, H, k_pe.shape[-1])
    k = torch.cat((k_nope, k_pe), -1).permute(0, 2, 3, 1).contiguous()  # [B,H,n+r,T]
    return q @ k


def attend(probs, v):
    """probs [B,H,S,T], v [B,T,H,dv] -> [B,S,H*dv]."""
    B, H, S, _ = probs.shape
    out = probs @ v.transpose(1, 2).contiguous()  # [B,H,S,dv]
    return out.transpose(1, 2).reshape(B, S, -1)


def indexer_dots(q, k):
    """q [B,S,nh,hd], k [B,T,hd] -> [B,S,nh,T]."""
    B, S, nh, hd = q.shape
    return (q.reshape(B, S * nh, hd) @ k.transpose(1, 2)).view(B, S, nh, -1)


def indexer_combine(relu_dots, w):
    """relu_dots [B,S,nh,T], w [B,S,nh] -> [B,S,T]: the head-weighted sum (elementwise: as a
    matmul it is B*S products of 1 x nh by nh x T, slower than the multiply-add)."""
    return (relu_dots * w[..., None]).sum(2)


def routed_experts(experts, x, ids, w, out):
    """out + sum over each token's chosen experts e of w * experts[e](x): the token slots sorted
    by expert once, each expert run on its contiguous slice, one gather and one scatter-add."""
    k = ids.shape[1]
    flat = ids.flatten()
    order = flat.argsort(stable=True)  # slots grouped by expert, in token order within one
    counts = torch.bincount(flat, minlength=len(experts)).tolist()
    tok = order // k
    # index_select, not x[tok]: the latter's backward accumulates a token's k slots with
    # atomic adds in whatever order the threads run (runs differ); index_select's adds in
    # order. split, not slices: a slice's backward fills a zero tensor as large as all slots.
    xs = x.index_select(0, tok).split(counts)
    ys = [expert(xe) for expert, xe, n in zip(experts, xs, counts) if n]
    y = torch.cat(ys) * w.flatten()[order, None]
    return out.index_add(0, tok, y)
