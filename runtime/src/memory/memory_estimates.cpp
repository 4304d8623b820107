#include <glmrt/memory/memory_estimates.h>
#include <glmrt/model/model_weights.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/stored_matrix.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt {
namespace {

/// Values in a packed row of `bytes` bytes of `type`: the most that fit.
int64_t cols_of_packed_row(uint32_t type, int64_t bytes) {
  int64_t lo = 0, hi = 8 * bytes + 8;  // every format takes at least 1 bit per value
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (plugin::packed_row_bytes(type, mid) <= bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// Matrices the model keeps in f32 whatever the precision (model_weights.cpp):
/// the router and the indexer's head weights decide discrete choices.
bool kept_f32(const std::string& name) {
  return name.ends_with(".mlp.gate.weight") || name.ends_with(".indexer.weights_proj.weight");
}

bool is_indexer_projection(const std::string& name) {
  return name.ends_with(".indexer.wq_b.weight") || name.ends_with(".indexer.wk.weight");
}

bool is_boundary(const std::string& name) {
  return name == "model.embed_tokens.weight" || name == "lm_head.weight" ||
         name.ends_with(".embed_tokens.weight") || name.ends_with(".shared_head.head.weight");
}

/// Precision `stored` for `m`, tensor `t` of the file: the type of its bytes,
/// or for kv_b_proj, which the loader rearranges, the float type it is read
/// into (model_weights.cpp). A tensor no element type holds is refused.
void kept_as_stored(const TensorDirectory& tensors, const TensorInfo& t, ResidentMatrix& m) {
  if (m.name.ends_with("kv_b_proj.weight")) {
    m.precision = rearranged_precision(m.precision, t);
    return;
  }
  if (tensors.contains(m.name + ".qs") || tensors.contains(m.name + ".gqs")) return;  // packed
  m.kept_type = kept_element_type(t);
  if (m.kept_type < 0) fail_not_keepable(tensors, t);
}

/// A routed expert's matrix under precision `stored`: the element type of its
/// bytes, refused (naming it) when there is none.
uint32_t expert_kept_type(const TensorDirectory& tensors, const TensorInfo& t) {
  const int kept = kept_element_type(t);
  if (kept < 0) fail_not_keepable(tensors, t);
  return static_cast<uint32_t>(kept);
}

}  // namespace

uint64_t stored_matrix_bytes(int64_t rows, int64_t cols, WeightPrecision precision) {
  const auto row = plugin::packed_row_bytes(element_type_for(precision), cols);
  const int64_t scales =
      precision.quantized() ? 4 * MatrixStorage::scales_per_row_of(cols, precision.group) : 0;
  return static_cast<uint64_t>(rows) * static_cast<uint64_t>(row + scales);
}

uint32_t ResidentMatrix::element_type() const {
  return kept_type >= 0 ? static_cast<uint32_t>(kept_type) : element_type_for(precision);
}

uint64_t ResidentMatrix::bytes() const {
  if (vector) return static_cast<uint64_t>(rows) * 4;
  if (kept_type < 0) return stored_matrix_bytes(rows, cols, precision);
  return static_cast<uint64_t>(rows) *
         static_cast<uint64_t>(plugin::packed_row_bytes(element_type(), cols));
}

bool checkpoint_has_mtp(const ModelConfig& config, const TensorDirectory& tensors) {
  return config.num_nextn_predict_layers > 0 &&
         tensors.contains(fmt::format("model.layers.{}.eh_proj.weight", config.num_hidden_layers));
}

std::vector<ResidentMatrix> resident_matrices(const Profile& profile, const ModelConfig& config,
                                              const TensorDirectory& tensors) {
  const bool mtp = checkpoint_has_mtp(config, tensors);
  const std::string mtp_prefix = fmt::format("model.layers.{}.", config.num_hidden_layers);
  const WeightPrecision io_bits = boundary_bits(profile.dense_bits);
  std::vector<ResidentMatrix> matrices;
  for (const TensorInfo& t : tensors.tensors()) {
    const std::string& name = t.name;
    if (name.find(".mlp.experts.") != std::string::npos) continue;  // routed: streamed
    if (name.ends_with(".qs") || name.ends_with(".gqs")) continue;  // counted with their matrix
    if (!mtp && name.starts_with(mtp_prefix)) continue;
    if (name == "lm_head.weight" && config.tie_word_embeddings) continue;
    if (t.shape.size() != 2) {
      matrices.push_back({name, t.numel(), 1, WeightBits::f32, true});  // norms, biases: f32
      continue;
    }
    const int64_t rows = t.shape[0];
    int64_t cols = t.shape[1];
    const bool boundary = is_boundary(name);
    // Under `stored` the indexer's projections are widened to f32 too (model_weights.cpp).
    const bool f32 = kept_f32(name) || (profile.dense_bits.stored && is_indexer_projection(name));
    WeightPrecision target = boundary ? io_bits
                             : f32    ? WeightPrecision(WeightBits::f32)
                                      : profile.dense_bits;
    const auto stored_precision = stamped_precision(t.stamp, t.stamp_group);
    if (stored_precision && stored_precision->quantized() &&
        (tensors.contains(name + ".qs") || tensors.contains(name + ".gqs"))) {
      const WeightPrecision stored = *stored_precision;
      cols = cols_of_packed_row(weight_element_type(stored), cols);  // packed bytes -> values
      // Kept as stored when at the dense precision (boundary tensors included).
      if (stored == profile.dense_bits || profile.dense_bits.stored) target = stored;
    }
    matrices.push_back({name, rows, cols, target, false, -1});
    if (target.stored) kept_as_stored(tensors, t, matrices.back());
  }
  // The tied lm_head is a second matrix of embed_tokens' size.
  if (config.tie_word_embeddings) {
    matrices.push_back({"lm_head.weight", config.vocab_size, config.hidden_size, io_bits, false});
    if (io_bits.stored)
      kept_as_stored(tensors, tensors.at("model.embed_tokens.weight"), matrices.back());
  }
  return matrices;
}

uint64_t resident_weight_bytes(const Profile& profile, const ModelConfig& config,
                               const TensorDirectory& tensors) {
  uint64_t total = 0;
  for (const ResidentMatrix& m : resident_matrices(profile, config, tensors)) total += m.bytes();
  return total;
}

std::vector<UsedWeightFormat> weight_formats_in_use(
    const Profile& profile, const ModelConfig& config, const TensorDirectory& tensors,
    const std::vector<std::vector<ExpertLayout>>& layouts) {
  std::vector<UsedWeightFormat> used;
  const auto add = [&](uint32_t type, uint32_t group, const std::string& example) {
    for (const UsedWeightFormat& u : used)
      if (u.element_type == type && u.group_size == group) return;
    used.push_back({type, group, example});
  };
  for (const ResidentMatrix& m : resident_matrices(profile, config, tensors))
    if (!m.vector) add(m.element_type(), m.precision.group, m.name);
  for (const auto& layer : layouts)
    for (const ExpertLayout& e : layer)
      for (const ExpertTensorPlace& t : e.tensors) {
        if (t.packed_type >= 0)
          add(static_cast<uint32_t>(t.packed_type), static_cast<uint32_t>(t.group_size),
              "routed experts (as stored)");
        else if (profile.expert_bits.stored)
          add(expert_kept_type(tensors, *t.values), 0, t.values->name);
        else
          add(element_type_for(profile.expert_bits), profile.expert_bits.group,
              "routed experts (precision.experts)");
      }
  // The reconstructed MLA form multiplies by key blocks it widens to f32.
  add(GLMRT_F32, 0, "the reconstructed attention's key blocks");
  return used;
}

glmrt_weight_format UsedWeightFormat::format() const {
  glmrt_weight_format f{};
  f.struct_size = sizeof(f);
  f.element_type = element_type;
  f.group_size = group_size;
  f.alignment = 1;
  return f;
}

std::string UsedWeightFormat::name() const {
  const char* type = plugin::element_type_name(element_type);
  std::string text = type ? type : fmt::format("element type {}", element_type);
  if (group_size) text += fmt::format("-g{}", group_size);
  return text;
}

uint64_t kv_cache_bytes(const Profile& profile, const ModelConfig& config) {
  const uint64_t element = profile.kv_cache == CacheType::f32 ? 4 : 2;
  const int layers = config.num_hidden_layers + 1;  // Model::make_cache: main + MTP row
  uint64_t per_token = 0;
  for (int i = 0; i < layers; ++i) {
    per_token += static_cast<uint64_t>(config.kv_lora_rank + config.qk_rope_head_dim);
    if (config.indexer_kind(i) == IndexerKind::full)
      per_token += static_cast<uint64_t>(config.index_head_dim);
  }
  return per_token * element * static_cast<uint64_t>(profile.max_context);
}

ExpertSize largest_expert(const std::vector<std::vector<ExpertLayout>>& layouts,
                          WeightPrecision bits) {
  ExpertSize size;
  for (const auto& layer : layouts)
    for (const ExpertLayout& e : layer) {
      uint64_t in_memory = 0;
      for (const ExpertTensorPlace& t : e.tensors) {
        if (t.packed_type >= 0)
          in_memory += static_cast<uint64_t>(t.rows) *
                       static_cast<uint64_t>(
                           plugin::packed_row_bytes(static_cast<uint32_t>(t.packed_type), t.cols) +
                           4 * MatrixStorage::scales_per_row_of(t.cols, t.group_size));
        else if (bits.stored)
          in_memory +=
              static_cast<uint64_t>(t.rows) *
              static_cast<uint64_t>(plugin::packed_row_bytes(
                  static_cast<uint32_t>(std::max(kept_element_type(*t.values), 0)), t.cols));
        else
          in_memory += stored_matrix_bytes(t.rows, t.cols, bits);
      }
      size.in_memory = std::max(size.in_memory, in_memory);
      size.read = std::max(size.read, e.bytes);
    }
  return size;
}

}  // namespace glmrt
