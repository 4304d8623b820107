#include <glmrt/base/error.h>
#include <glmrt/model_maker/presets.h>

#include <fmt/ranges.h>

namespace glmrt {
namespace {

using nlohmann::ordered_json;

// GLM-5 (zai-org/GLM-5, glm_moe_dsa) as released, but for the layer counts:
// first_k_dense_replace 3 and 78 layers there.
ordered_json glm5_config() {
  return {
      {"architectures", {"GlmMoeDsaForCausalLM"}},
      {"model_type", "glm_moe_dsa"},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"dtype", "bfloat16"},
      {"eos_token_id", {154820, 154827, 154829}},
      {"pad_token_id", 154820},
      {"ep_size", 1},
      {"hidden_act", "silu"},
      {"head_dim", 64},
      {"hidden_size", 6144},
      {"index_head_dim", 128},
      {"index_n_heads", 32},
      {"index_topk", 2048},
      {"indexer_rope_interleave", true},
      {"initializer_range", 0.02},
      {"intermediate_size", 12288},
      {"kv_lora_rank", 512},
      {"max_position_embeddings", 202752},
      {"moe_intermediate_size", 2048},
      {"moe_layer_freq", 1},
      {"n_group", 1},
      {"n_routed_experts", 256},
      {"n_shared_experts", 1},
      {"norm_topk_prob", true},
      {"num_attention_heads", 64},
      {"num_experts_per_tok", 8},
      {"num_key_value_heads", 64},
      {"pretraining_tp", 1},
      {"q_lora_rank", 2048},
      {"qk_head_dim", 256},
      {"qk_nope_head_dim", 192},
      {"qk_rope_head_dim", 64},
      {"rms_norm_eps", 1e-05},
      {"rope_interleave", true},
      {"rope_parameters", {{"rope_theta", 1000000}, {"rope_type", "default"}}},
      {"routed_scaling_factor", 2.5},
      {"scoring_func", "sigmoid"},
      {"tie_word_embeddings", false},
      {"topk_group", 1},
      {"topk_method", "noaux_tc"},
      {"use_cache", true},
      {"v_head_dim", 256},
      {"vocab_size", 154880},
  };
}

// DeepSeek-V3 (deepseek-ai/DeepSeek-V3, deepseek_v3) as released, but for the
// layer counts (3 dense layers and 61 in all there) and the FP8 weights.
ordered_json deepseek_v3_config() {
  return {
      {"architectures", {"DeepseekV3ForCausalLM"}},
      {"model_type", "deepseek_v3"},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", 0},
      {"eos_token_id", 1},
      {"ep_size", 1},
      {"hidden_act", "silu"},
      {"hidden_size", 7168},
      {"initializer_range", 0.02},
      {"intermediate_size", 18432},
      {"kv_lora_rank", 512},
      {"max_position_embeddings", 163840},
      {"moe_intermediate_size", 2048},
      {"moe_layer_freq", 1},
      {"n_group", 8},
      {"n_routed_experts", 256},
      {"n_shared_experts", 1},
      {"norm_topk_prob", true},
      {"num_attention_heads", 128},
      {"num_experts_per_tok", 8},
      {"num_key_value_heads", 128},
      {"q_lora_rank", 1536},
      {"qk_nope_head_dim", 128},
      {"qk_rope_head_dim", 64},
      {"rms_norm_eps", 1e-06},
      {"rope_scaling",
       {{"beta_fast", 32},
        {"beta_slow", 1},
        {"factor", 40},
        {"mscale", 1.0},
        {"mscale_all_dim", 1.0},
        {"original_max_position_embeddings", 4096},
        {"type", "yarn"}}},
      {"rope_theta", 10000},
      {"routed_scaling_factor", 2.5},
      {"scoring_func", "sigmoid"},
      {"tie_word_embeddings", false},
      {"topk_group", 4},
      {"topk_method", "noaux_tc"},
      {"torch_dtype", "bfloat16"},
      {"use_cache", true},
      {"v_head_dim", 128},
      {"vocab_size", 129280},
  };
}

// Kimi-K2 (moonshotai/Kimi-K2-Instruct, kimi_k2: the DeepSeek-V3 classes) as
// released, but for the layer count (61 there; one dense layer either way).
ordered_json kimi_k2_config() {
  ordered_json c = deepseek_v3_config();
  c["model_type"] = "kimi_k2";
  c["bos_token_id"] = 163584;
  c["eos_token_id"] = 163585;
  c["max_position_embeddings"] = 131072;
  c["n_group"] = 1;
  c["n_routed_experts"] = 384;
  c["num_attention_heads"] = 64;
  c["num_key_value_heads"] = 64;
  c["rope_scaling"] = {{"beta_fast", 1.0},      {"beta_slow", 1.0},
                       {"factor", 32.0},        {"mscale", 1.0},
                       {"mscale_all_dim", 1.0}, {"original_max_position_embeddings", 4096},
                       {"type", "yarn"}};
  c["rope_theta"] = 50000.0;
  c["routed_scaling_factor"] = 2.827;
  c["topk_group"] = 1;
  c["vocab_size"] = 163840;
  return c;
}

// glm_tiny's dimensions (tests/fixtures/glm_tiny) with GLM-5's settings.
ordered_json tiny_config() {
  ordered_json c = glm5_config();
  c["eos_token_id"] = {1010, 1017, 1019};
  c["pad_token_id"] = 1010;
  c["head_dim"] = 8;
  c["hidden_size"] = 64;
  c["index_head_dim"] = 16;
  c["index_n_heads"] = 2;
  c["index_topk"] = 8;
  c["intermediate_size"] = 96;
  c["kv_lora_rank"] = 16;
  c["max_position_embeddings"] = 4096;
  c["moe_intermediate_size"] = 32;
  c["n_routed_experts"] = 16;
  c["num_attention_heads"] = 4;
  c["num_experts_per_tok"] = 4;
  c["num_key_value_heads"] = 4;
  c["q_lora_rank"] = 32;
  c["qk_head_dim"] = 24;
  c["qk_nope_head_dim"] = 16;
  c["qk_rope_head_dim"] = 8;
  c["rope_parameters"] = {{"rope_theta", 10000.0}, {"rope_type", "default"}};
  c["v_head_dim"] = 16;
  c["vocab_size"] = 1024;
  return c;
}

// tiny with rows of 256 values in the routed experts: GGUF tests of the
// 256-value block types (K-quants, i-quants).
ordered_json tiny_256_config() {
  ordered_json c = tiny_config();
  c["hidden_size"] = 256;
  c["moe_intermediate_size"] = 256;
  return c;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  return {"glm5-slice", "deepseek-v3-slice", "kimi-k2-slice", "tiny", "tiny-256"};
}

ordered_json model_preset_config(std::string_view preset, int moe_layers, bool mtp) {
  ordered_json c;
  if (preset == "glm5-slice") {
    c = glm5_config();
  } else if (preset == "deepseek-v3-slice") {
    c = deepseek_v3_config();
  } else if (preset == "kimi-k2-slice") {
    c = kimi_k2_config();
  } else if (preset == "tiny") {
    c = tiny_config();
  } else if (preset == "tiny-256") {
    c = tiny_256_config();
  } else {
    fail("--preset: unknown preset `{}` (known: {})", preset,
         fmt::join(model_preset_names(), ", "));
  }
  if (moe_layers < 1) fail("--moe-layers: expected at least 1 MoE layer, found {}", moe_layers);
  c["first_k_dense_replace"] = 1;
  c["num_hidden_layers"] = 1 + moe_layers;
  c["num_nextn_predict_layers"] = mtp ? 1 : 0;
  return c;
}

}  // namespace glmrt
