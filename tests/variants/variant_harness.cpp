#include "variant_harness.h"

#include <glmrt/profile/profile.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <stdexcept>

namespace glmrt::test {

nlohmann::json base_variant_config() {
  return {
      {"architectures", {"GlmMoeDsaForCausalLM"}},
      {"model_type", "glm_moe_dsa"},
      {"vocab_size", 256},
      {"hidden_size", 48},
      {"intermediate_size", 80},
      {"moe_intermediate_size", 24},
      {"num_hidden_layers", 5},
      {"num_attention_heads", 3},
      {"num_key_value_heads", 3},
      {"n_shared_experts", 1},
      {"n_routed_experts", 12},
      {"routed_scaling_factor", 2.5},
      {"kv_lora_rank", 24},
      {"q_lora_rank", 40},
      {"qk_rope_head_dim", 4},
      {"qk_nope_head_dim", 12},
      {"qk_head_dim", 16},
      {"v_head_dim", 20},
      {"head_dim", 4},
      {"n_group", 1},
      {"topk_group", 1},
      {"num_experts_per_tok", 3},
      {"norm_topk_prob", true},
      {"topk_method", "noaux_tc"},
      {"scoring_func", "sigmoid"},
      // Deliberately disagrees with mlp_layer_types, which wins: layers 0 and 2 are dense.
      {"first_k_dense_replace", 1},
      {"mlp_layer_types", {"dense", "sparse", "dense", "sparse", "sparse"}},
      {"hidden_act", "silu"},
      {"max_position_embeddings", 2048},
      {"rms_norm_eps", 1e-5},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 500.0}}},
      {"rope_interleave", true},
      {"indexer_rope_interleave", false},
      {"index_topk", 6},
      {"index_head_dim", 8},
      {"index_n_heads", 3},
      {"indexer_types", {"full", "full", "full", "full", "full"}},
      {"num_nextn_predict_layers", 1},
      {"tie_word_embeddings", false},
      {"bos_token_id", 0},
      {"eos_token_id", {255}},
      {"pad_token_id", 254},
      {"torch_dtype", "float32"},
  };
}

std::unique_ptr<Engine> open_reference_engine(const std::filesystem::path& model_dir) {
  // ctest runs the suite once per f32 profile (reference.yaml, reference-avx2.yaml).
  const char* chosen = std::getenv("GLMRT_VARIANT_PROFILE");
  Profile profile = load_profile(std::filesystem::path(GLMRT_SOURCE_DIR) / "configs" /
                                 (chosen ? chosen : "reference.yaml"));
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  return Engine::open(profile, model_dir);
}

int argmax(const std::vector<float>& row) {
  return static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
}

namespace {

bool decisions_clear(const ReferenceResult& r, size_t first_greedy_row) {
  if (r.min_router_gap < kMinDecisionGap || r.min_indexer_rel_gap < kMinDecisionGap) return false;
  for (size_t t = first_greedy_row; t < r.logits.size(); ++t)
    if (r.margin(t) < kMinDecisionGap) return false;
  return true;
}

}  // namespace

ClearSequence choose_clear_sequence(const ReferenceConfig& config, const TensorList& weights,
                                    int prompt_length, int greedy_steps, uint64_t seed,
                                    int max_attempts) {
  std::mt19937_64 random(seed);
  // Leave out the top ids, where the configs keep eos/pad.
  std::uniform_int_distribution<int32_t> token(1, config.vocab - 3);
  const bool with_mtp = config.mtp_layers > 0;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    ClearSequence s;
    s.attempts = attempt;
    for (int i = 0; i < prompt_length; ++i) s.prompt.push_back(token(random));
    // Decisions are causal: a prompt unclear on its own stays unclear. Reject early.
    s.reference = reference_forward(config, weights, s.prompt, with_mtp);
    if (!decisions_clear(s.reference, prompt_length - 1)) continue;
    s.full = s.prompt;
    // Greedy with full forwards: step i's logits are row prompt_length - 1 + i.
    for (int step = 0; step < greedy_steps; ++step) {
      const bool last = step + 1 == greedy_steps;
      if (step > 0) s.reference = reference_forward(config, weights, s.full, last && with_mtp);
      s.greedy.push_back(s.reference.argmax(s.full.size() - 1));
      if (!last) s.full.push_back(s.greedy.back());
    }
    if (decisions_clear(s.reference, prompt_length - 1)) return s;
  }
  throw std::runtime_error("no prompt with clear router/indexer/greedy decisions was found");
}

std::vector<std::vector<float>> runtime_teacher_forced(Engine& engine,
                                                       const std::vector<int32_t>& tokens) {
  KvCache cache = engine.new_cache();
  const int64_t T = static_cast<int64_t>(tokens.size());
  const std::vector<float> hidden = engine.model().forward(cache, tokens);
  const std::vector<float> flat = engine.model().logits(hidden, T);
  const int64_t V = engine.model().config().vocab_size;
  std::vector<std::vector<float>> rows(T);
  for (int64_t t = 0; t < T; ++t) rows[t].assign(flat.begin() + t * V, flat.begin() + (t + 1) * V);
  return rows;
}

OracleCase oracle_case(const ClearSequence& s, const ReferenceConfig& config, std::string name) {
  const ReferenceResult& r = s.reference;
  OracleCase c;
  c.name = std::move(name);
  c.prompt_ids = s.prompt;
  c.generated_ids = s.greedy;
  c.full_ids = s.full;
  for (size_t t = 0; t < r.logits.size(); ++t) {
    c.logits.push_back(r.logits[t]);
    c.tf_pred.push_back(r.argmax(t));
    c.margin.push_back(r.margin(t));
  }
  c.dense_equivalent = static_cast<int>(s.full.size()) <= config.index_topk;
  c.sparse_rows_from = config.index_topk;
  for (const auto& row : r.mtp_logits) {
    std::vector<double> sorted = row;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    c.mtp_pred.push_back(
        static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
    c.mtp_margin.push_back(sorted[0] - sorted[1]);
  }
  for (const auto& [layer, rows] : r.indexer_selection)
    for (const auto& keys : rows) c.indexer_topk[layer].emplace_back(keys.begin(), keys.end());
  for (const auto& [layer, rows] : r.experts)
    for (const auto& ids : rows) {
      std::vector<int32_t> sorted(ids.begin(), ids.end());
      std::sort(sorted.begin(), sorted.end());
      c.experts[layer].push_back(std::move(sorted));
    }
  return c;
}

}  // namespace glmrt::test
