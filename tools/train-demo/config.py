"""The demo model's architecture: a GLM-5 (`glm_moe_dsa`) config.json, scaled down.

Ratios follow GLM-5 where it matters to glmrt: 2*kv_lora + rope (144) is well above
nope + rope + v (80), so glmrt's cost model picks the absorbed attention form for decode and the
reconstructed form for long prefill chunks; index_topk (32) is below most prompt lengths, so the
DSA indexer really restricts attention; the first layer is dense, the rest MoE with sigmoid
noaux_tc routing, a shared expert and an MTP layer.
"""

VOCAB_SIZE = 4096


def demo_config():
    L = 4
    return {
        "architectures": ["GlmMoeDsaForCausalLM"],
        "model_type": "glm_moe_dsa",
        "vocab_size": VOCAB_SIZE,
        "hidden_size": 128,
        "intermediate_size": 384,
        "moe_intermediate_size": 64,
        "num_hidden_layers": L,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_shared_experts": 1,
        "n_routed_experts": 16,
        "routed_scaling_factor": 2.5,
        "kv_lora_rank": 64,
        "q_lora_rank": 64,
        "qk_rope_head_dim": 16,
        "qk_nope_head_dim": 32,
        "qk_head_dim": 48,
        "v_head_dim": 32,
        "head_dim": 16,
        "n_group": 1,
        "topk_group": 1,
        "num_experts_per_tok": 4,
        "norm_topk_prob": True,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "moe_layer_freq": 1,
        "first_k_dense_replace": 1,
        "mlp_layer_types": ["dense"] + ["sparse"] * (L - 1),
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
        "indexer_types": ["full"] * L,
        "num_nextn_predict_layers": 1,
        "torch_dtype": "bfloat16",
        "dtype": "bfloat16",
    }
