#include "gguf_config.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/gguf.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace glmrt::model_files {
namespace {

using nlohmann::json;

struct Architecture {
  std::string_view gguf;        // general.architecture
  std::string_view model_type;  // config.json's
  bool indexer;                 // has the DSA indexer keys
};

constexpr std::array kArchitectures = {
    Architecture{"glm-dsa", "glm_moe_dsa", true},
    // DeepSeek-V3 / R1 and Kimi-K2 (the same architecture for llama.cpp and transformers).
    Architecture{"deepseek2", "deepseek_v3", false},
    Architecture{"deepseek32", "deepseek_v32", true},
};

// llama.cpp's expert_gating_func values (LLAMA_EXPERT_GATING_FUNC_TYPE_*).
constexpr int kGatingSigmoid = 2;

class Keys {
 public:
  Keys(const gguf::Metadata& metadata, std::string_view arch) : md_(metadata), arch_(arch) {}

  std::string key(std::string_view name) const { return fmt::format("{}.{}", arch_, name); }
  bool has(std::string_view name) const { return md_.contains(key(name)); }
  int integer(std::string_view name) const { return md_.get<int32_t>(key(name)); }
  int integer_or(std::string_view name, int fallback) const {
    return md_.get_or<int32_t>(key(name), fallback);
  }
  bool boolean_or(std::string_view name, bool fallback) const {
    return md_.get_or<bool>(key(name), fallback);
  }
  // The converter stores Python floats as float32: their shortest decimal
  // (1e-05, not 9.99999974e-06) is what the Hugging Face config said.
  double number(std::string_view name) const { return decimal(key(name)); }
  double number_or(std::string_view name, double fallback) const {
    return has(name) ? number(name) : fallback;
  }
  double decimal(const std::string& full_key) const {
    const gguf::Value& v = md_.at(full_key);
    if (v.type == gguf::ValueType::float32)
      return std::stod(fmt::format("{}", md_.get<float>(full_key)));
    return md_.get<double>(full_key);
  }
  const gguf::Metadata& metadata() const { return md_; }
  [[noreturn]] void refuse(std::string_view name, const std::string& why) const {
    fail("{}: metadata key '{}' {}", md_.file(), key(name), why);
  }

 private:
  const gguf::Metadata& md_;
  std::string_view arch_;
};

json rope_scaling(const Keys& k) {
  const std::string type(k.metadata().get_or<std::string_view>(k.key("rope.scaling.type"), "none"));
  if (type == "none") return nullptr;
  if (type != "yarn")
    k.refuse("rope.scaling.type",
             fmt::format("is \"{}\", but glmrt runs \"yarn\" or no scaling only", printable(type)));
  json yarn = {
      {"type", "yarn"},
      {"factor", k.number("rope.scaling.factor")},
      {"original_max_position_embeddings", k.integer("rope.scaling.original_context_length")},
      {"beta_fast", k.number_or("rope.scaling.yarn_beta_fast", 32.0)},
      {"beta_slow", k.number_or("rope.scaling.yarn_beta_slow", 1.0)}};
  // yarn_log_multiplier is 0.1 * mscale_all_dim; llama.cpp's graph assumes
  // mscale equal to it (as DeepSeek-V3's and Kimi-K2's configs have them).
  if (k.has("rope.scaling.yarn_log_multiplier")) {
    const double m = std::round(k.number("rope.scaling.yarn_log_multiplier") * 10.0 * 1e6) / 1e6;
    yarn["mscale"] = m;
    yarn["mscale_all_dim"] = m;
  }
  return yarn;
}

std::vector<int> end_of_generation_ids(const gguf::Metadata& md) {
  std::vector<int> ids;
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                          "tokenizer.ggml.eom_token_id"})
    if (const auto id = md.find_as<int32_t>(key);
        id && std::find(ids.begin(), ids.end(), *id) == ids.end())
      ids.push_back(*id);
  return ids;
}

int vocab_size(const Keys& k, const gguf::Model& model) {
  if (k.has("vocab_size")) return k.integer("vocab_size");
  const gguf::Metadata& md = k.metadata();
  if (md.contains("tokenizer.ggml.tokens"))
    return static_cast<int>(md.get_array("tokenizer.ggml.tokens").size());
  const gguf::TensorInfo& embed = model.at("token_embd.weight");
  if (embed.dims.size() != 2)
    fail("{}: token_embd.weight has {} dims, expected 2", md.file(), embed.dims.size());
  return static_cast<int>(embed.dims[1]);
}

json indexer_types(const Keys& k, int main_layers) {
  const auto types = k.metadata().get<std::vector<bool>>(k.key("attention.indexer.types"));
  if (static_cast<int>(types.size()) != main_layers)
    k.refuse("attention.indexer.types",
             fmt::format("lists {} layers, expected one per main layer ({})", types.size(),
                         main_layers));
  json out = json::array();
  for (bool full : types) out.push_back(full ? "full" : "shared");
  return out;
}

}  // namespace

ConfigFields gguf_config_fields(const std::filesystem::path& source) {
  const gguf::Model model = gguf::Model::open(source);
  const gguf::Metadata& md = model.metadata();
  const auto arch_name = md.get<std::string_view>("general.architecture");
  const auto arch = std::find_if(kArchitectures.begin(), kArchitectures.end(),
                                 [&](const Architecture& a) { return a.gguf == arch_name; });
  if (arch == kArchitectures.end())
    fail(
        "{}: metadata key 'general.architecture' is \"{}\", which glmrt does not run (supported: "
        "glm-dsa, deepseek2, deepseek32)",
        md.file(), printable(arch_name));
  const Keys k(md, arch->gguf);

  // A file with MTP blocks counts them in block_count (they come last).
  const int nextn = k.integer_or("nextn_predict_layers", 0);
  const int blocks = k.integer("block_count");
  if (nextn < 0 || nextn >= blocks)
    k.refuse("nextn_predict_layers",
             fmt::format("is {}, expected from 0 to block_count - 1 = {}", nextn, blocks - 1));
  const int main_layers = blocks - nextn;
  const int rope = k.integer("rope.dimension_count");
  // key_length_mla / value_length_mla since llama.cpp splits kv_b; before,
  // key_length / value_length held the per-head sizes.
  const int qk_head = k.integer(k.has("attention.key_length_mla") ? "attention.key_length_mla"
                                                                  : "attention.key_length");
  const int v_head = k.integer(k.has("attention.value_length_mla") ? "attention.value_length_mla"
                                                                   : "attention.value_length");
  if (qk_head <= rope)
    k.refuse("attention.key_length_mla",
             fmt::format("is {}, expected more than rope.dimension_count ({})", qk_head, rope));
  if (const int gating = k.integer("expert_gating_func"); gating != kGatingSigmoid)
    k.refuse("expert_gating_func", fmt::format("is {}, but glmrt computes sigmoid gating ({}) only",
                                               gating, kGatingSigmoid));

  json c = {
      {"model_type", arch->model_type},
      {"vocab_size", vocab_size(k, model)},
      {"hidden_size", k.integer("embedding_length")},
      {"intermediate_size", k.integer("feed_forward_length")},
      {"moe_intermediate_size", k.integer("expert_feed_forward_length")},
      {"num_hidden_layers", main_layers},
      {"num_attention_heads", k.integer("attention.head_count")},
      {"kv_lora_rank", k.integer("attention.kv_lora_rank")},
      {"qk_nope_head_dim", qk_head - rope},
      {"qk_rope_head_dim", rope},
      {"v_head_dim", v_head},
      {"n_routed_experts", k.integer("expert_count")},
      {"n_shared_experts", k.integer_or("expert_shared_count", 0)},
      {"num_experts_per_tok", k.integer("expert_used_count")},
      {"n_group", k.integer_or("expert_group_count", 1)},
      {"topk_group", k.integer_or("expert_group_used_count", 1)},
      // llama.cpp's defaults when the keys are absent.
      {"norm_topk_prob", k.boolean_or("expert_weights_norm", false)},
      {"routed_scaling_factor", k.number("expert_weights_scale")},
      {"rms_norm_eps", k.number("attention.layer_norm_rms_epsilon")},
      {"max_position_embeddings", k.integer("context_length")},
      {"rope_theta", k.number_or("rope.freq_base", 10000.0)},
      {"first_k_dense_replace", k.integer_or("leading_dense_block_count", 0)},
      {"num_nextn_predict_layers", nextn},
      // Without an output tensor llama.cpp uses token_embd (tied).
      {"tie_word_embeddings", model.find("output.weight") == nullptr},
      {"eos_token_id", end_of_generation_ids(md)},
  };
  if (const int q_lora = k.integer_or("attention.q_lora_rank", 0); q_lora > 0)
    c["q_lora_rank"] = q_lora;
  if (const json scaling = rope_scaling(k); !scaling.is_null()) c["rope_scaling"] = scaling;
  if (const auto bos = md.find_as<int32_t>("tokenizer.ggml.bos_token_id")) c["bos_token_id"] = *bos;
  if (const auto pad = md.find_as<int32_t>("tokenizer.ggml.padding_token_id"))
    c["pad_token_id"] = *pad;
  if (arch->indexer) {
    c["index_n_heads"] = k.integer("attention.indexer.head_count");
    c["index_head_dim"] = k.integer("attention.indexer.key_length");
    c["index_topk"] = k.integer("attention.indexer.top_k");
  }
  if (arch->gguf == "glm-dsa") {
    // llama.cpp's glm-dsa indexer rotates interleaved pairs (GLM-5's configs say so too).
    c["indexer_rope_interleave"] = true;
    if (k.has("attention.indexer.types")) c["indexer_types"] = indexer_types(k, main_layers);
  }
  return ConfigFields(model.files().front(), std::move(c));
}

}  // namespace glmrt::model_files
