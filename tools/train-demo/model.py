"""GLM-5 (`glm_moe_dsa`) in PyTorch, written from ../../DESIGN.md "Model semantics", and the
DeepSeek kinds it descends from (`deepseek_v3` / `kimi_k2`: no indexer, YaRN RoPE, optional
q LoRA; `deepseek_v32`: an indexer on every layer), ported from transformers' modeling files
(modeling_deepseek_v3.py, modeling_deepseek_v32.py, modeling_rope_utils._compute_yarn_parameters).

One module serves two purposes:
- training (float32, batched; DSA either dense with the indexer learning by KL, or sparse), and
- the float64 reference forward that makes ref.json (batch 1, exact inference semantics, with a
  trace of every discrete decision so prompts near ties can be rejected).

Parameter names are the Hugging Face checkpoint names, so `state_dict()` is the checkpoint
(see export.py); the config is the checkpoint's config.json dict.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import fast_ops


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


def rope(x, positions, theta, interleave):
    """Rotary embedding on the last dim of x [B,S,d] or [B,S,heads,d], positions [S].

    interleave: pairs (0,1),(2,3),... (GPT-J); else split-half pairs (i, i + d/2) (NeoX).
    inv_freq[j] = theta^(-2j/d) for pair j either way; `theta` may be a Rotary (YaRN
    frequencies, cos and sin times its attention factor).
    """
    d = x.shape[-1]
    factor = 1.0
    if isinstance(theta, Rotary):
        inv_freq, factor = theta.inv_freq.to(x.dtype).to(x.device), theta.attention_factor
    else:
        inv_freq = theta ** (-torch.arange(0, d, 2, dtype=x.dtype, device=x.device) / d)
    ang = positions.to(x.dtype)[:, None] * inv_freq[None, :]  # [S, d/2]
    ang = ang[None] if x.dim() == 3 else ang[None, :, None]
    cos, sin = ang.cos() * factor, ang.sin() * factor
    if interleave:
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


NO_INDEXER_KINDS = ("deepseek_v3", "kimi_k2")


def yarn_mscale(factor, m=1.0):
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def rope_object(cfg):
    """The config's rope dict (rope_parameters first, as transformers v5) and its theta."""
    rp = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    theta = rp.get("rope_theta", cfg.get("rope_theta", 10000.0))
    return rp, theta


class Rotary:
    """RoPE frequencies and the cos/sin factor as transformers computes them (default or yarn)."""

    def __init__(self, cfg):
        rp, self.theta = rope_object(cfg)
        d = cfg["qk_rope_head_dim"]
        kind = rp.get("rope_type", rp.get("type", "default"))
        j = torch.arange(0, d, 2, dtype=torch.float64)
        pos_freqs = self.theta ** (j / d)
        self.attention_factor, self.softmax_multiplier = 1.0, 1.0
        if kind == "default":
            self.inv_freq = 1.0 / pos_freqs
            return
        assert kind == "yarn", kind
        orig = rp.get("original_max_position_embeddings", cfg["max_position_embeddings"])
        factor = rp.get("factor") or cfg["max_position_embeddings"] / orig
        mscale, mscale_all = rp.get("mscale"), rp.get("mscale_all_dim")
        af = rp.get("attention_factor")
        if af is None:
            af = yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all) \
                if mscale and mscale_all else yarn_mscale(factor)
        self.attention_factor = af
        if mscale_all:
            self.softmax_multiplier = yarn_mscale(factor, mscale_all) ** 2
        beta_fast, beta_slow = rp.get("beta_fast") or 32, rp.get("beta_slow") or 1

        def corr(rot):
            return d * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(self.theta))
        low, high = corr(beta_fast), corr(beta_slow)
        if rp.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        extrap = 1 - ramp
        self.inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrap) + (1.0 / pos_freqs) * extrap

    def apply(self, x, positions, interleave):
        return rope(x, positions, self, interleave)


INDEXER_MIN_DOT = 0.1


class Indexer(nn.Module):
    """DSA lightning indexer: scores every visible key for every query."""

    def __init__(self, cfg):
        super().__init__()
        D, self.nh, self.hd = cfg["hidden_size"], cfg["index_n_heads"], cfg["index_head_dim"]
        self.rope_dim = cfg["qk_rope_head_dim"]
        self.theta = Rotary(cfg)
        self.interleave = bool(cfg.get("indexer_rope_interleave", False))
        self.wq_b = nn.Linear(cfg["q_lora_rank"], self.nh * self.hd, bias=False)
        self.wk = nn.Linear(D, self.hd, bias=False)
        self.k_norm = nn.LayerNorm(self.hd, eps=1e-6)
        self.weights_proj = nn.Linear(D, self.nh, bias=False)

    def forward(self, x, qr, positions, fast=False):
        """x [B,S,D], qr [B,S,q_lora] -> scores [B,S(query),S(key)] (causal mask not applied).
        fast: fast_ops' forms (training only)."""
        B, S, _ = x.shape
        R = self.rope_dim
        q = self.wq_b(qr).view(B, S, self.nh, self.hd)  # each head [rope | nope]
        q = torch.cat((rope(q[..., :R], positions, self.theta, self.interleave), q[..., R:]), -1)
        k = self.k_norm(self.wk(x))
        k = torch.cat((rope(k[..., :R], positions, self.theta, self.interleave), k[..., R:]), -1)
        w = self.weights_proj(x) * self.nh ** -0.5  # [B,S,nh]
        if fast:
            dots = fast_ops.indexer_dots(q, k) * self.hd ** -0.5
            self.last_dots = dots
            return fast_ops.indexer_combine(F.relu(dots), w)
        dots = torch.einsum("bshd,btd->bsht", q, k) * self.hd ** -0.5
        self.last_dots = dots  # training: the hinge in Attention.forward
        return torch.einsum("bsht,bsh->bst", F.relu(dots), w)


class Attention(nn.Module):
    """MLA (q_lora, latent kv with a shared rope key) with the DSA indexer."""

    def __init__(self, cfg, has_indexer):
        super().__init__()
        D, H = cfg["hidden_size"], cfg["num_attention_heads"]
        self.H, self.nope, self.rope_dim = H, cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"]
        self.v_dim, self.kv_lora = cfg["v_head_dim"], cfg["kv_lora_rank"]
        self.theta = Rotary(cfg)
        self.interleave = bool(cfg.get("rope_interleave", True))
        self.topk = cfg.get("index_topk")
        qk = self.nope + self.rope_dim
        self.scale = self.theta.softmax_multiplier / math.sqrt(qk)
        self.q_lora = cfg.get("q_lora_rank")
        if self.q_lora is None:  # DeepSeek-V3 without the query LoRA
            self.q_proj = nn.Linear(D, H * qk, bias=False)
        else:
            self.q_a_proj = nn.Linear(D, self.q_lora, bias=False)
            self.q_a_layernorm = RMSNorm(self.q_lora, 1e-6)
            self.q_b_proj = nn.Linear(self.q_lora, H * qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(D, self.kv_lora + self.rope_dim, bias=False)
        self.kv_a_layernorm = RMSNorm(self.kv_lora, 1e-6)
        self.kv_b_proj = nn.Linear(self.kv_lora, H * (self.nope + self.v_dim), bias=False)
        self.o_proj = nn.Linear(H * self.v_dim, D, bias=False)
        self.indexer = Indexer(cfg) if has_indexer else None
        self.fast = False  # fast_ops in training modes (Model(fast=True))

    def forward(self, x, positions, mode, shared_sel=None, trace=None):
        """mode: "dense" (causal, indexer trained by KL), "sparse" (DSA applied) or "ref"
        (sparse, float64 inference semantics with a trace). Returns (out, selection, kl)."""
        B, S, _ = x.shape
        H, nope, R = self.H, self.nope, self.rope_dim
        if self.q_lora is None:
            qr, q = None, self.q_proj(x).view(B, S, H, nope + R)
        else:
            qr = self.q_a_layernorm(self.q_a_proj(x))
            q = self.q_b_proj(qr).view(B, S, H, nope + R)
        q_nope, q_pe = q[..., :nope], rope(q[..., nope:], positions, self.theta, self.interleave)
        ckv = self.kv_a_proj_with_mqa(x)
        latent, k_pe = ckv[..., : self.kv_lora], ckv[..., self.kv_lora:]
        k_pe = rope(k_pe, positions, self.theta, self.interleave)  # [B,S,R], shared by heads
        kv = self.kv_b_proj(self.kv_a_layernorm(latent)).view(B, S, H, nope + self.v_dim)
        k_nope, v = kv[..., :nope], kv[..., nope:]
        fast = self.fast and mode != "ref"
        if fast:
            scores = fast_ops.mla_scores(q_nope, q_pe, k_nope, k_pe) * self.scale
        else:
            scores = (torch.einsum("bshd,bthd->bhst", q_nope, k_nope) +
                      torch.einsum("bshd,btd->bhst", q_pe, k_pe)) * self.scale
        causal = torch.ones(S, S, dtype=torch.bool, device=x.device).tril()

        # DSA selection: rows with more than index_topk visible keys keep the top index_topk.
        selection, idx_scores = shared_sel, None
        if self.indexer is not None:
            if mode == "ref":
                idx_scores = self.indexer(x, qr, positions)
            else:  # the indexer learns only from its own KL loss (inputs detached)
                idx_scores = self.indexer(x.detach(), qr.detach(), positions, fast)
            if S > self.topk and (mode != "dense" or trace is not None):
                masked = idx_scores.detach().masked_fill(~causal, float("-inf"))
                top = masked.topk(self.topk, dim=-1).indices
                selection = torch.zeros(B, S, S, dtype=torch.bool, device=x.device)
                selection.scatter_(-1, top, True)
                selection |= causal & (torch.arange(S, device=x.device)[:, None] < self.topk)
                selection &= causal
            else:
                selection = None
            if trace is not None:
                trace["indexer_scores"] = idx_scores[0]
                trace["selection"] = selection[0] if selection is not None else None
        allowed = causal if (mode == "dense" or selection is None) else selection
        scores = scores.masked_fill(~allowed[:, None] if allowed.dim() == 3 else ~allowed,
                                    float("-inf"))
        probs = scores.softmax(-1)
        if trace is not None:
            trace["probs"] = probs[0]  # [H, S, S]: indexer recall in evaluate.py
        if fast:
            out = fast_ops.attend(probs, v)
        else:
            out = torch.einsum("bhst,bthd->bshd", probs, v).reshape(B, S, H * self.v_dim)

        kl = None
        if idx_scores is not None and mode != "ref":
            # DeepSeek-V3.2 indexer objective: KL(main attention summed over heads and
            # L1-normalised, detached || softmax of the indexer scores), over the keys the main
            # attention saw (all visible keys when dense, the selected ones when sparse).
            target = probs.detach().sum(1)
            target = target / target.sum(-1, keepdim=True)
            outside = ~allowed if allowed.dim() == 3 else ~allowed[None]
            logq = idx_scores.masked_fill(outside, float("-inf")).log_softmax(-1)
            logq = logq.masked_fill(outside, 0.0)
            kl = (target * target.clamp_min(1e-30).log() - target * logq).sum(-1).mean()
            # The relu makes a key's score exactly 0 once every head's dot is negative, and the
            # KL pushes unimportant keys there; then rows whose top-k boundary falls among
            # zeros select by tie-breaking, which no two implementations do alike. A hinge
            # keeps, for every visible key, the largest head dot above INDEXER_MIN_DOT, so
            # scores stay distinct (low keys go negative through negatively weighted heads).
            best = self.indexer.last_dots.max(2).values  # [B, S, S]
            hinge = F.relu(INDEXER_MIN_DOT - best).masked_fill(~causal, 0.0)
            kl = kl + hinge.sum() / (causal.sum() * B)
        return self.o_proj(out), selection, kl


class MLP(nn.Module):
    def __init__(self, D, inter):
        super().__init__()
        self.gate_proj = nn.Linear(D, inter, bias=False)
        self.up_proj = nn.Linear(D, inter, bias=False)
        self.down_proj = nn.Linear(inter, D, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Gate(nn.Module):
    def __init__(self, D, E):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(E, D))
        # Aux-loss-free balancing bias (DeepSeek-V3): a buffer, updated outside backprop.
        self.register_buffer("e_score_correction_bias", torch.zeros(E))


class MoE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D, E = cfg["hidden_size"], cfg["n_routed_experts"]
        self.E, self.k = E, cfg["num_experts_per_tok"]
        self.n_group, self.topk_group = cfg.get("n_group", 1), cfg.get("topk_group", 1)
        self.norm_topk_prob = cfg.get("norm_topk_prob", True)
        self.scale = cfg["routed_scaling_factor"]
        self.gate = Gate(D, E)
        self.experts = nn.ModuleList(MLP(D, cfg["moe_intermediate_size"]) for _ in range(E))
        self.shared_experts = MLP(D, cfg["moe_intermediate_size"] * cfg["n_shared_experts"])
        self.last_load = None
        self.fast = False  # fast_ops.routed_experts outside mode "ref" (Model(fast=True))

    def route(self, x, trace=None):
        scores = torch.sigmoid(x @ self.gate.weight.t())  # [N,E]
        choice = scores.detach() + self.gate.e_score_correction_bias
        if self.n_group > 1:
            g = choice.view(-1, self.n_group, self.E // self.n_group)
            group_score = g.topk(2, dim=-1).values.sum(-1)
            keep = group_score.topk(self.topk_group, dim=-1).indices
            gmask = torch.zeros_like(group_score, dtype=torch.bool).scatter_(1, keep, True)
            choice = choice.masked_fill(~gmask.repeat_interleave(self.E // self.n_group, 1), 0.0)
        ids = choice.topk(self.k, dim=-1).indices
        if trace is not None:
            srt = choice.sort(-1, descending=True).values
            trace["router_gap"] = (srt[:, self.k - 1] - srt[:, self.k]).min().item()
            trace["experts"] = ids.sort(-1).values
        w = scores.gather(1, ids)
        if self.norm_topk_prob:
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
        return ids, w * self.scale

    def forward(self, x, trace=None, mode="ref"):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        ids, w = self.route(x, trace)
        out = self.shared_experts(x)
        self.last_load = torch.bincount(ids.flatten(), minlength=self.E)
        if self.fast and mode != "ref":
            return fast_ops.routed_experts(self.experts, x, ids, w, out).view(shape)
        for e in range(self.E):
            tok, slot = (ids == e).nonzero(as_tuple=True)
            if tok.numel():
                out = out.index_add(0, tok, self.experts[e](x[tok]) * w[tok, slot, None])
        return out.view(shape)


class DecoderLayer(nn.Module):
    def __init__(self, cfg, dense, has_indexer):
        super().__init__()
        D = cfg["hidden_size"]
        self.input_layernorm = RMSNorm(D, cfg["rms_norm_eps"])
        self.self_attn = Attention(cfg, has_indexer)
        self.post_attention_layernorm = RMSNorm(D, cfg["rms_norm_eps"])
        self.mlp = MLP(D, cfg["intermediate_size"]) if dense else MoE(cfg)

    def forward(self, h, positions, mode, shared_sel=None, trace=None):
        a, sel, kl = self.self_attn(self.input_layernorm(h), positions, mode, shared_sel, trace)
        h = h + a
        x = self.post_attention_layernorm(h)
        h = h + (self.mlp(x) if isinstance(self.mlp, MLP) else self.mlp(x, trace, mode))
        return h, sel, kl


class SharedHead(nn.Module):
    def __init__(self, cfg, local_head):
        super().__init__()
        self.norm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])
        if local_head:
            self.head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)


class MTPLayer(DecoderLayer):
    """DeepSeek-V3 MTP block at index num_hidden_layers: predicts token t+2."""

    def __init__(self, cfg, local_copies=False):
        super().__init__(cfg, dense=False, has_indexer=cfg["model_type"] not in NO_INDEXER_KINDS)
        D = cfg["hidden_size"]
        self.enorm = RMSNorm(D, cfg["rms_norm_eps"])
        self.hnorm = RMSNorm(D, cfg["rms_norm_eps"])
        self.eh_proj = nn.Linear(2 * D, D, bias=False)
        self.shared_head = SharedHead(cfg, local_copies)
        if local_copies:
            self.embed_tokens = nn.Embedding(cfg["vocab_size"], D)


class Model(nn.Module):
    def __init__(self, cfg, mtp_local_copies=False, fast=False):
        """fast: train with fast_ops (other rounding; mode "ref" is unaffected)."""
        super().__init__()
        self.cfg = cfg
        L = cfg["num_hidden_layers"]
        kinds = cfg.get("mlp_layer_types") or \
            ["dense" if i < cfg["first_k_dense_replace"] else "sparse" for i in range(L)]
        idx_types = cfg.get("indexer_types") or ["full"] * L
        if cfg["model_type"] != "glm_moe_dsa":  # GLM alone has shared-indexer layers
            idx_types = ["none" if cfg["model_type"] in NO_INDEXER_KINDS else "full"] * L
        self.shared_indexer = [t == "shared" for t in idx_types]
        self.has_indexer = [t == "full" for t in idx_types]
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList(
            DecoderLayer(cfg, kinds[i] == "dense", self.has_indexer[i]) for i in range(L))
        if cfg.get("num_nextn_predict_layers", 0):
            self.layers.append(MTPLayer(cfg, mtp_local_copies))
        self.norm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)
        for module in self.modules():
            if isinstance(module, (Attention, MoE)):
                module.fast = fast

    @property
    def mtp(self):
        return self.layers[self.cfg["num_hidden_layers"]] \
            if len(self.layers) > self.cfg["num_hidden_layers"] else None

    def forward(self, ids, mode="dense", traces=None):
        """ids [B,S] -> (final hidden after model.norm [B,S,D], indexer KL losses).
        traces: list to receive one dict per layer (mode "ref", batch 1)."""
        positions = torch.arange(ids.shape[1], device=ids.device)
        h = self.embed_tokens(ids)
        sel, kls = None, []
        for i in range(self.cfg["num_hidden_layers"]):
            tr = {} if traces is not None else None
            h, sel, kl = self.layers[i](h, positions, mode, sel if self.shared_indexer[i] else None,
                                        tr)
            if kl is not None:
                kls.append(kl)
            if traces is not None:
                traces.append(tr)
        return self.norm(h), kls

    def mtp_forward(self, h_main, next_ids, mode="dense", trace=None, mask_pos0=False):
        """h_main [B,S,D] (after model.norm) at positions t, next_ids [B,S] = tokens t+1 ->
        MTP logits for tokens t+2, plus the MTP indexer KL."""
        m = self.mtp
        emb = (m.embed_tokens if hasattr(m, "embed_tokens") else self.embed_tokens)(next_ids)
        if mask_pos0:
            emb = emb.clone()
            emb[:, 0] = 0
        x = m.eh_proj(torch.cat((m.enorm(emb), m.hnorm(h_main)), -1))
        positions = torch.arange(next_ids.shape[1], device=next_ids.device)
        h, _, kl = DecoderLayer.forward(m, x, positions, mode, None, trace)
        head = m.shared_head.head if hasattr(m.shared_head, "head") else self.lm_head
        return head(m.shared_head.norm(h)), kl


def to_hf_name(name):
    """Module parameter name -> checkpoint tensor name (HF adds `model.` to all but lm_head)."""
    return name if name.startswith("lm_head.") else "model." + name


def from_hf_name(name):
    return name[len("model."):] if name.startswith("model.") else name


def hf_state_dict(m):
    return {to_hf_name(k): v for k, v in m.state_dict().items()}


def load_hf_state_dict(m, tensors):
    missing, unexpected = m.load_state_dict({from_hf_name(k): v for k, v in tensors.items()},
                                            strict=False)
    if missing or unexpected:
        raise ValueError(f"checkpoint does not match the model: missing {missing[:5]}..., "
                         f"unexpected {unexpected[:5]}...")
