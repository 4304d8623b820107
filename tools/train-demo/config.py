"""The demo model's architecture: a GLM-5 (`glm_moe_dsa`) config.json, scaled down.

Ratios follow GLM-5 where it matters to glmrt: 2*kv_lora + rope (144) is well above
nope + rope + v (80), so glmrt's cost model picks the absorbed attention form for decode and the
reconstructed form for long prefill chunks; index_topk (32) is below most prompt lengths, so the
DSA indexer really restricts attention; the first layer is dense, the rest MoE with sigmoid
noaux_tc routing, a shared expert and an MTP layer.
"""

VOCAB_SIZE = 4096


def glm_config(hidden, layers, heads, q_lora, kv_lora, experts, expert_width, dense_width,
               top_k=4):
    """A glm_moe_dsa config.json: the first layer dense, the rest MoE (top-k, one shared
    expert); head dims, the DSA indexer and RoPE as the demo (see the module docstring)."""
    return {
        "architectures": ["GlmMoeDsaForCausalLM"],
        "model_type": "glm_moe_dsa",
        "vocab_size": VOCAB_SIZE,
        "hidden_size": hidden,
        "intermediate_size": dense_width,
        "moe_intermediate_size": expert_width,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "n_shared_experts": 1,
        "n_routed_experts": experts,
        "routed_scaling_factor": 2.5,
        "kv_lora_rank": kv_lora,
        "q_lora_rank": q_lora,
        "qk_rope_head_dim": 16,
        "qk_nope_head_dim": 32,
        "qk_head_dim": 48,
        "v_head_dim": 32,
        "head_dim": 16,
        "n_group": 1,
        "topk_group": 1,
        "num_experts_per_tok": top_k,
        "norm_topk_prob": True,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "moe_layer_freq": 1,
        "first_k_dense_replace": 1,
        "mlp_layer_types": ["dense"] + ["sparse"] * (layers - 1),
        "hidden_act": "silu",
        "max_position_embeddings": 4096,
        "initializer_range": 0.02,
        "rms_norm_eps": 1e-05,
        "use_cache": True,
        "pad_token_id": VOCAB_SIZE - 14,
        "bos_token_id": VOCAB_SIZE - 12,
        # <|endoftext|>, <|user|>, <|observation|> (ids follow bpe.SPECIAL_TOKENS)
        "eos_token_id": [VOCAB_SIZE - 14, VOCAB_SIZE - 7, VOCAB_SIZE - 5],
        "tie_word_embeddings": False,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "rope_interleave": True,
        "indexer_rope_interleave": True,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "index_topk": 32,
        "index_head_dim": 32,
        "index_n_heads": 4,
        "indexer_types": ["full"] * layers,
        "num_nextn_predict_layers": 1,
        "torch_dtype": "bfloat16",
        "dtype": "bfloat16",
    }


def demo_config():
    """The bundled demo model (models/glm-demo): 3.29 M parameters."""
    return glm_config(hidden=128, layers=4, heads=4, q_lora=64, kv_lora=64, experts=16,
                      expert_width=64, dense_width=384)


def trained_config():
    """The harder-to-quantize checkpoint of issue 25: the issue names hidden 192, 6 layers
    (1 dense), 6 heads, q_lora 96, kv_lora 48, 32 experts of width 96 (top-4). The rest keeps
    the demo's choices: the dense layer is 6 expert widths wide (GLM-5: 12288 = 6 x 2048),
    head dims nope 32 / rope 16 / v 32, so 2*kv_lora + rope = 112 stays above
    nope + rope + v = 80 (the absorbed form for decode, as GLM-5's 1088 vs 512); the indexer's
    4 heads of 32 and index_topk 32 keep make_ref.py's longer cases sparse."""
    return glm_config(hidden=192, layers=6, heads=6, q_lora=96, kv_lora=48, experts=32,
                      expert_width=96, dense_width=576)


def routing_config():
    """Issue 37's third checkpoint, for checking the expert predictor where it was not tuned:
    the demo's dimensions with its expert parameters cut finer, 32 experts of width 32 and
    top-8 (GLM-5 and DeepSeek-V3 route top-8 of 256), so a token's choice is a larger set out
    of more experts than the demo's top-4 of 16."""
    return glm_config(hidden=128, layers=4, heads=4, q_lora=64, kv_lora=64, experts=32,
                      expert_width=32, dense_width=192, top_k=8)


# Training presets: the config, the run length, and whether training uses fast_ops (same
# function, other rounding: the demo keeps the loop it was trained with, bit for bit).
PRESETS = {
    "demo": {"config": demo_config, "steps": 400, "batch": 8, "fast": False},
    "trained": {"config": trained_config, "steps": 1500, "batch": 16, "fast": True},
    "routing": {"config": routing_config, "steps": 400, "batch": 8, "fast": True},
}
