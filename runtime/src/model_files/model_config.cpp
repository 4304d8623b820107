#include <glmrt/model_files/model_config.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <glmrt/base/error.h>
#include <glmrt/model_files/checkpoint_layers.h>
#include <glmrt/model_files/safetensors.h>
#include "config_fields.h"
#include "config_layer_kinds.h"
#include "config_rope.h"
#include "gguf_config.h"

namespace glmrt {

namespace {

using model_files::ConfigFields;
using nlohmann::json;

void refuse_quantized(const ConfigFields& fields) {
  const json* quantization = fields.optional("quantization_config");
  if (quantization == nullptr) return;
  std::string method = "unspecified";
  if (quantization->is_object() && quantization->contains("quant_method")) {
    method = quantization->at("quant_method").dump();
  }
  fail(
      "{}: key 'quantization_config' (quant_method {}) is not supported: glmrt loads F32, BF16 "
      "or F16 checkpoints and quantizes them itself",
      fields.file(), method);
}

std::vector<int> read_eos(const ConfigFields& fields) {
  const json* eos = fields.optional("eos_token_id");
  if (eos == nullptr) return {};
  if (!eos->is_array()) return {fields.as_int(*eos, "eos_token_id")};
  std::vector<int> ids;
  for (const json& id : *eos) ids.push_back(fields.as_int(id, "eos_token_id"));
  return ids;
}

// A special token id outside the vocabulary names a row the embedding and the
// output head do not have: a stop token never produced, a prompt start that
// reads past the table. Explicit negatives (-1 for "none") are refused too:
// absence is written by leaving the key out or null.
void check_special_token_ids(const ModelConfig& c, const ConfigFields& fields) {
  const auto check = [&](std::string_view key, int id) {
    if (id < 0 || id >= c.vocab_size) {
      fail("{}: key '{}' holds {}, not a token id of the vocabulary (vocab_size {}: ids 0 to {})",
           fields.file(), key, id, c.vocab_size, c.vocab_size - 1);
    }
  };
  for (const int id : c.eos_token_ids) check("eos_token_id", id);
  if (fields.optional("bos_token_id")) check("bos_token_id", c.bos_token_id);
  if (fields.optional("pad_token_id")) check("pad_token_id", c.pad_token_id);
}

void require_positive(const ConfigFields& fields, std::string_view key, double value) {
  if (!(value > 0) || !std::isfinite(value)) {
    fail("{}: key '{}' must be positive, found {}", fields.file(), key, value);
  }
}

void validate(const ModelConfig& c, const ConfigFields& fields) {
  const std::pair<std::string_view, int> positive[] = {
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"intermediate_size", c.intermediate_size},
      {"moe_intermediate_size", c.moe_intermediate_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"kv_lora_rank", c.kv_lora_rank},
      {"qk_nope_head_dim", c.qk_nope_head_dim},
      {"qk_rope_head_dim", c.qk_rope_head_dim},
      {"v_head_dim", c.v_head_dim},
      {"n_routed_experts", c.n_routed_experts},
      {"num_experts_per_tok", c.num_experts_per_tok},
      {"n_group", c.n_group},
      {"topk_group", c.topk_group},
      {"max_position_embeddings", c.max_position_embeddings},
  };
  for (const auto& [key, value] : positive) require_positive(fields, key, value);
  if (c.kind->indexer != IndexerLayout::none) {
    require_positive(fields, "index_topk", c.index_topk);
    require_positive(fields, "index_head_dim", c.index_head_dim);
    require_positive(fields, "index_n_heads", c.index_n_heads);
    if (c.index_head_dim < c.qk_rope_head_dim) {
      fail("{}: key 'index_head_dim' is {}, smaller than its rope part qk_rope_head_dim = {}",
           fields.file(), c.index_head_dim, c.qk_rope_head_dim);
    }
  }
  require_positive(fields, "rms_norm_eps", c.rms_norm_eps);
  require_positive(fields, "routed_scaling_factor", c.routed_scaling_factor);
  require_positive(fields, "rope_theta", c.rope.theta);
  if (c.n_shared_experts < 0) {
    fail("{}: key 'n_shared_experts' must not be negative, found {}", fields.file(),
         c.n_shared_experts);
  }
  if (c.num_nextn_predict_layers < 0) {
    fail("{}: key 'num_nextn_predict_layers' must not be negative, found {}", fields.file(),
         c.num_nextn_predict_layers);
  }
  if (c.qk_rope_head_dim % 2 != 0) {
    fail("{}: key 'qk_rope_head_dim' is {}, but RoPE rotates pairs of dimensions: expected even",
         fields.file(), c.qk_rope_head_dim);
  }
  // The model computes qk_head_dim() = nope + rope as an int.
  if (int64_t{c.qk_nope_head_dim} + c.qk_rope_head_dim > std::numeric_limits<int>::max()) {
    fail("{}: keys 'qk_nope_head_dim' ({}) + 'qk_rope_head_dim' ({}) exceed a head size of {}",
         fields.file(), c.qk_nope_head_dim, c.qk_rope_head_dim, std::numeric_limits<int>::max());
  }
  if (const json* qk_head_dim = fields.optional("qk_head_dim")) {
    const int value = fields.as_int(*qk_head_dim, "qk_head_dim");
    if (value != c.qk_head_dim()) {
      fail("{}: key 'qk_head_dim' is {}, expected qk_nope_head_dim + qk_rope_head_dim = {}",
           fields.file(), value, c.qk_head_dim());
    }
  }
  if (c.n_routed_experts % c.n_group != 0) {
    fail("{}: key 'n_group' ({}) must divide n_routed_experts ({})", fields.file(), c.n_group,
         c.n_routed_experts);
  }
  if (c.topk_group > c.n_group) {
    fail("{}: key 'topk_group' ({}) exceeds n_group ({})", fields.file(), c.topk_group, c.n_group);
  }
  if (c.num_experts_per_tok > c.n_routed_experts) {
    fail("{}: key 'num_experts_per_tok' ({}) exceeds n_routed_experts ({})", fields.file(),
         c.num_experts_per_tok, c.n_routed_experts);
  }
  const int experts_in_kept_groups = c.topk_group * (c.n_routed_experts / c.n_group);
  if (c.num_experts_per_tok > experts_in_kept_groups) {
    fail(
        "{}: key 'num_experts_per_tok' ({}) exceeds the {} experts of the topk_group ({}) groups "
        "the router keeps",
        fields.file(), c.num_experts_per_tok, experts_in_kept_groups, c.topk_group);
  }
  if (c.n_group > 1 && c.n_routed_experts / c.n_group < 2) {
    fail(
        "{}: key 'n_group' ({}) leaves fewer than 2 experts per group, but a group's score is "
        "the sum of its top 2",
        fields.file(), c.n_group);
  }
}

}  // namespace

MlpKind ModelConfig::mlp_kind(int layer) const {
  if (layer < 0) fail("{}: layer {} has no MLP kind: layers are numbered from 0", file, layer);
  if (layer >= num_hidden_layers) return MlpKind::sparse;
  if (static_cast<size_t>(layer) >= mlp_layer_types.size()) {
    fail("{}: MLP kind of layer {} asked of a config listing {} layer kinds", file, layer,
         mlp_layer_types.size());
  }
  return mlp_layer_types[layer];
}

IndexerKind ModelConfig::indexer_kind(int layer) const {
  if (layer < 0) fail("{}: layer {} has no indexer kind: layers are numbered from 0", file, layer);
  if (layer >= num_hidden_layers)
    return kind && kind->indexer == IndexerLayout::none ? IndexerKind::none : IndexerKind::full;
  if (static_cast<size_t>(layer) >= indexer_types.size()) {
    fail("{}: indexer kind of layer {} asked of a config listing {} layer kinds", file, layer,
         indexer_types.size());
  }
  return indexer_types[layer];
}

namespace {

// Keys that change the math but have one value glmrt computes: another value
// must be refused, not ignored.
void require_supported_choices(const ConfigFields& fields) {
  struct Choice {
    std::string_view key;
    std::vector<std::string_view> accepted;
    std::string_view what;
  };
  const Choice choices[] = {
      {"hidden_act", {"silu", "swish"}, "SiLU-gated MLPs"},
      {"scoring_func", {"sigmoid"}, "sigmoid router scores"},
      {"topk_method", {"noaux_tc"}, "noaux_tc expert selection (sigmoid + correction bias)"},
  };
  for (const Choice& choice : choices) {
    const json* value = fields.optional(choice.key);
    if (value == nullptr) continue;
    const std::string name = fields.as_string(*value, choice.key);
    if (std::find(choice.accepted.begin(), choice.accepted.end(), name) == choice.accepted.end())
      fail("{}: key '{}' is \"{}\", but glmrt computes {} only (expected \"{}\")", fields.file(),
           choice.key, name, choice.what, choice.accepted.front());
  }
}

// `q_lora_rank: null` (or absent) is a plain q_proj where the kind allows it.
int read_q_lora_rank(const ConfigFields& fields, const ModelKind& kind) {
  const json* rank = fields.optional("q_lora_rank");
  if (rank == nullptr && kind.q_lora_optional) return 0;
  if (rank == nullptr) {
    fail(
        "{}: missing required key 'q_lora_rank' ({} needs the query LoRA: its indexer reads "
        "q_a's output)",
        fields.file(), kind.model_type);
  }
  const int value = fields.as_int(*rank, "q_lora_rank");
  if (value <= 0) {
    fail("{}: key 'q_lora_rank' must be positive{}, found {}", fields.file(),
         kind.q_lora_optional ? " or null (a plain q_proj)" : "", value);
  }
  return value;
}

bool read_pairing(const ConfigFields& fields, std::string_view key, PairingSource source) {
  switch (source) {
    case PairingSource::config_default_interleaved:
      return fields.optional_bool(key, true);
    case PairingSource::config_default_split_half:
      return fields.optional_bool(key, false);
    case PairingSource::always_interleaved:
    case PairingSource::always_split_half:
      break;
  }
  const bool interleaved = source == PairingSource::always_interleaved;
  // The modeling file ignores the key; one that says otherwise is refused.
  if (fields.optional(key) && fields.optional_bool(key, interleaved) != interleaved) {
    fail("{}: key '{}' is {}, but {} always uses {} RoPE there", fields.file(), key, !interleaved,
         fields.required_string("model_type"), interleaved ? "interleaved" : "split-half");
  }
  return interleaved;
}

std::vector<IndexerKind> read_layer_indexers(const ConfigFields& fields, const ModelKind& kind,
                                             int num_layers) {
  switch (kind.indexer) {
    case IndexerLayout::glm_shared:
      return model_files::read_indexer_types(fields, num_layers);
    case IndexerLayout::every_layer:
      return std::vector<IndexerKind>(num_layers, IndexerKind::full);
    case IndexerLayout::none:
      break;
  }
  return std::vector<IndexerKind>(num_layers, IndexerKind::none);
}

ModelConfig load(const std::filesystem::path& model_dir, const TensorDirectory* checkpoint,
                 QuantizationConfig quantization) {
  const ConfigFields fields = is_gguf_model(model_dir) ? model_files::gguf_config_fields(model_dir)
                                                       : ConfigFields(model_dir / "config.json");
  ModelConfig c;
  c.file = fields.file();
  c.model_type = fields.required_string("model_type");
  c.kind = find_model_kind(c.model_type);
  if (c.kind == nullptr) {
    fail("{}: key 'model_type' is \"{}\", which glmrt does not run (supported: {})", c.file,
         c.model_type, supported_model_types());
  }
  if (quantization == QuantizationConfig::refused) refuse_quantized(fields);
  c.max_position_embeddings = fields.required_int("max_position_embeddings");
  c.rope = model_files::read_rope_settings(fields, c.max_position_embeddings);

  c.vocab_size = fields.required_int("vocab_size");
  c.hidden_size = fields.required_int("hidden_size");
  c.intermediate_size = fields.required_int("intermediate_size");
  c.moe_intermediate_size = fields.required_int("moe_intermediate_size");
  c.num_hidden_layers = fields.required_int("num_hidden_layers");
  c.num_attention_heads = fields.required_int("num_attention_heads");
  c.q_lora_rank = read_q_lora_rank(fields, *c.kind);
  c.kv_lora_rank = fields.required_int("kv_lora_rank");
  c.qk_nope_head_dim = fields.required_int("qk_nope_head_dim");
  c.qk_rope_head_dim = fields.required_int("qk_rope_head_dim");
  c.v_head_dim = fields.required_int("v_head_dim");

  c.n_routed_experts = fields.required_int("n_routed_experts");
  c.n_shared_experts = fields.required_int("n_shared_experts");
  c.num_experts_per_tok = fields.required_int("num_experts_per_tok");
  c.n_group = fields.optional_int("n_group", 1);
  c.topk_group = fields.optional_int("topk_group", 1);
  c.norm_topk_prob = fields.optional_bool("norm_topk_prob", true);
  c.routed_scaling_factor = fields.required_number("routed_scaling_factor");

  c.rms_norm_eps = fields.required_number("rms_norm_eps");
  c.rope_interleave = read_pairing(fields, "rope_interleave", c.kind->rope_pairing);
  c.indexer_rope_interleave =
      read_pairing(fields, "indexer_rope_interleave", c.kind->indexer_rope_pairing);
  c.lora_norm_eps = c.kind->lora_norm_eps;

  if (c.kind->indexer != IndexerLayout::none) {
    c.index_topk = fields.required_int("index_topk");
    c.index_head_dim = fields.required_int("index_head_dim");
    c.index_n_heads = fields.required_int("index_n_heads");
  }

  c.num_nextn_predict_layers = fields.optional_int("num_nextn_predict_layers", 0);
  c.tie_word_embeddings = fields.optional_bool("tie_word_embeddings", false);
  c.eos_token_ids = read_eos(fields);
  c.bos_token_id = fields.optional_int("bos_token_id", -1);
  c.pad_token_id = fields.optional_int("pad_token_id", -1);

  validate(c, fields);
  check_special_token_ids(c, fields);
  require_supported_choices(fields);
  // Before anything per layer is built: the count may be absurd.
  if (checkpoint) {
    check_layer_count(c, CheckpointLayers::of(*checkpoint));
  } else if (constexpr int kMaxLayers = 1 << 16; c.num_hidden_layers > kMaxLayers) {
    // Read alone, nothing bounds the count the per-layer kinds are built from;
    // no model comes near this.
    fail("{}: key 'num_hidden_layers' is {}, expected at most {}", fields.file(),
         c.num_hidden_layers, kMaxLayers);
  }
  c.mlp_layer_types = model_files::read_mlp_layer_types(fields, c.num_hidden_layers);
  c.indexer_types = read_layer_indexers(fields, *c.kind, c.num_hidden_layers);
  return c;
}

}  // namespace

ModelConfig load_model_config(const std::filesystem::path& model_dir) {
  return load(model_dir, nullptr, QuantizationConfig::refused);
}

ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const TensorDirectory& checkpoint) {
  return load(model_dir, &checkpoint, QuantizationConfig::refused);
}

ModelConfig load_model_config(const std::filesystem::path& model_dir,
                              const TensorDirectory& checkpoint, QuantizationConfig quantization) {
  return load(model_dir, &checkpoint, quantization);
}

}  // namespace glmrt
