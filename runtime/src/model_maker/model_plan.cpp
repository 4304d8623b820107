#include <glmrt/base/error.h>
#include <glmrt/model_maker/model_plan.h>
#include <glmrt/plugin/weight_format.h>

#include <fmt/format.h>

#include <cmath>

namespace glmrt {
namespace {

using nlohmann::ordered_json;
using Fill = TensorRecipe::Fill;

constexpr uint64_t kDataAlignment = 4096;

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

struct PackedPair {
  PlannedTensor values, scales;
};

// W[rows, cols] stored as `precision` (an integer one), with elements of RMS
// gain / sqrt(cols): unit-RMS inputs give outputs of RMS ~gain. Per-row
// scales in `.qs` (the seed program's form), per-group and two-level ones in
// `.gqs`.
PackedPair packed_matrix(const std::string& name, WeightPrecision precision, int64_t rows,
                         int64_t cols, double gain) {
  const uint32_t type = weight_element_type(precision);
  const int64_t row_bytes = plugin::packed_row_bytes(type, cols);
  TensorRecipe recipe{Fill::packed, type, rows, cols, 0, gain / std::sqrt(double(cols)), 0, name};
  recipe.group_size = precision.group;
  PackedPair p;
  p.values = {name,
              DType::U8,
              {rows, row_bytes},
              stamp_of_precision(precision),
              0,
              static_cast<uint64_t>(rows * row_bytes),
              recipe,
              precision.group};
  recipe.fill = Fill::row_scales;
  const int64_t per_row = precision.group ? (cols + precision.group - 1) / precision.group : 1;
  p.scales = {name + (precision.group ? ".gqs" : ".qs"),
              DType::F32,
              precision.group ? std::vector<int64_t>{rows, per_row} : std::vector<int64_t>{rows},
              StampedFormat::f32,
              0,
              static_cast<uint64_t>(rows * per_row) * 4,
              recipe};
  return p;
}

PlannedTensor f32_tensor(const std::string& name, std::vector<int64_t> shape, double mean,
                         double stddev) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t rows = shape.size() == 2 ? shape[0] : 1;
  TensorRecipe recipe{Fill::normal, 0, rows, n / rows, mean, stddev, 0, name};
  return {name,  DType::F32, std::move(shape), StampedFormat::f32, 0, static_cast<uint64_t>(n) * 4,
          recipe};
}

// A norm's scale: 1 + small noise.
PlannedTensor norm(const std::string& name, int64_t n) {
  return f32_tensor(name, {n}, 1.0, 0.1);
}

class FileBuilder : public PlannedFileBuilder {
 public:
  using PlannedFileBuilder::add;
  void add(PackedPair p) {
    add(std::move(p.values));
    add(std::move(p.scales));
  }
};

struct Dims {
  int64_t V, D, I, moe, H, q_lora, L, rope, nope, vd, E, shared, ih, id;
  bool indexer;  // the kind has DSA indexers (GLM-5; not DeepSeek-V3 / Kimi-K2)
  explicit Dims(const ordered_json& c)
      : V(c.at("vocab_size")),
        D(c.at("hidden_size")),
        I(c.at("intermediate_size")),
        moe(c.at("moe_intermediate_size")),
        H(c.at("num_attention_heads")),
        q_lora(c.at("q_lora_rank")),
        L(c.at("kv_lora_rank")),
        rope(c.at("qk_rope_head_dim")),
        nope(c.at("qk_nope_head_dim")),
        vd(c.at("v_head_dim")),
        E(c.at("n_routed_experts")),
        shared(c.at("n_shared_experts")),
        ih(c.value("index_n_heads", 0)),
        id(c.value("index_head_dim", 0)),
        indexer(c.contains("index_topk")) {}
};

const WeightPrecision kDense = WeightBits::int8;

void add_swiglu(FileBuilder& f, const std::string& p, int64_t D, int64_t width) {
  f.add(packed_matrix(p + "gate_proj.weight", kDense, width, D, 1.0));
  f.add(packed_matrix(p + "up_proj.weight", kDense, width, D, 1.0));
  f.add(packed_matrix(p + "down_proj.weight", kDense, D, width, 0.5));
}

void add_attention(FileBuilder& f, const Dims& d, const std::string& p) {
  const std::string a = p + "self_attn.";
  f.add(packed_matrix(a + "q_a_proj.weight", kDense, d.q_lora, d.D, 1.0));
  f.add(norm(a + "q_a_layernorm.weight", d.q_lora));
  f.add(packed_matrix(a + "q_b_proj.weight", kDense, d.H * (d.nope + d.rope), d.q_lora, 1.5));
  f.add(packed_matrix(a + "kv_a_proj_with_mqa.weight", kDense, d.L + d.rope, d.D, 1.0));
  f.add(norm(a + "kv_a_layernorm.weight", d.L));
  f.add(packed_matrix(a + "kv_b_proj.weight", kDense, d.H * (d.nope + d.vd), d.L, 1.0));
  f.add(packed_matrix(a + "o_proj.weight", kDense, d.D, d.H * d.vd, 0.5));
  if (!d.indexer) return;
  const std::string ix = a + "indexer.";
  f.add(packed_matrix(ix + "wq_b.weight", kDense, d.ih * d.id, d.q_lora, 1.0));
  f.add(packed_matrix(ix + "wk.weight", kDense, d.id, d.D, 1.0));
  f.add(f32_tensor(ix + "weights_proj.weight", {d.ih, d.D}, 0.0, 1.0 / std::sqrt(double(d.D))));
  f.add(norm(ix + "k_norm.weight", d.id));
  f.add(f32_tensor(ix + "k_norm.bias", {d.id}, 0.0, 0.1));
}

// The resident tensors of layer `layer`; a sparse layer's experts go elsewhere.
void add_layer(FileBuilder& f, const Dims& d, int layer, bool sparse, double hot_skew) {
  const std::string p = fmt::format("model.layers.{}.", layer);
  f.add(norm(p + "input_layernorm.weight", d.D));
  add_attention(f, d, p);
  f.add(norm(p + "post_attention_layernorm.weight", d.D));
  if (!sparse) {
    add_swiglu(f, p + "mlp.", d.D, d.I);
    return;
  }
  f.add(f32_tensor(p + "mlp.gate.weight", {d.E, d.D}, 0.0, 1.5 / std::sqrt(double(d.D))));
  PlannedTensor bias = f32_tensor(p + "mlp.gate.e_score_correction_bias", {d.E}, 0.0, 0.0);
  bias.recipe.fill = Fill::hot_bias;
  bias.recipe.hot_skew = hot_skew;
  f.add(std::move(bias));
  add_swiglu(f, p + "mlp.shared_experts.", d.D, d.moe * d.shared);
}

// Layer `layer`'s routed experts: each 4096-aligned with its three matrices
// adjacent, then every scale of the layer together (the seed program's form).
PlannedFile expert_file(const Dims& d, int layer, WeightPrecision experts) {
  FileBuilder f;
  std::vector<PlannedTensor> scales;
  for (int64_t e = 0; e < d.E; ++e) {
    const std::string p = fmt::format("model.layers.{}.mlp.experts.{}.", layer, e);
    PackedPair parts[3] = {packed_matrix(p + "gate_proj.weight", experts, d.moe, d.D, 1.0),
                           packed_matrix(p + "up_proj.weight", experts, d.moe, d.D, 1.0),
                           packed_matrix(p + "down_proj.weight", experts, d.D, d.moe, 0.5)};
    for (int k = 0; k < 3; ++k) {
      f.add(std::move(parts[k].values), k == 0 ? kExpertAlignment : 1);
      scales.push_back(std::move(parts[k].scales));
    }
  }
  for (auto& s : scales) f.add(std::move(s), 1);
  return std::move(f).build();
}

}  // namespace

void PlannedFileBuilder::add(PlannedTensor t, uint64_t alignment) {
  t.offset = align_up(end_, alignment);
  end_ = t.offset + t.bytes;
  tensors_.push_back(std::move(t));
}

PlannedFile PlannedFileBuilder::build() && {
  return {"", std::move(tensors_), end_};
}

std::string shard_name(size_t index, size_t count) {
  return fmt::format("model-{:05d}-of-{:05d}.safetensors", index + 1, count);
}

int64_t PlannedTensor::generation_rows() const {
  switch (recipe.fill) {
    case Fill::packed:
      return recipe.rows;
    case Fill::normal:
      return shape.size() == 2 ? shape[0] : 1;
    default:
      return 1;
  }
}

std::string PlannedFile::header() const {
  ordered_json stamps = ordered_json::object();
  for (const auto& t : tensors)
    if (t.stamp != StampedFormat::none) stamps[t.name] = stamp_text(t.stamp, t.stamp_group);
  ordered_json h = ordered_json::object();
  h["__metadata__"] = {{"format", "pt"}, {"quant_formats", stamps.dump()}};
  for (const auto& t : tensors)
    h[t.name] = {{"dtype", dtype_name(t.dtype)},
                 {"shape", t.shape},
                 {"data_offsets", {t.offset, t.offset + t.bytes}}};
  std::string text = h.dump();
  // Spaces after the JSON (the format allows them) put the data section on a
  // 4096-byte boundary, so aligned offsets are aligned in the file too.
  text.append(align_up(8 + text.size(), kDataAlignment) - 8 - text.size(), ' ');
  return text;
}

uint64_t ModelPlan::total_bytes() const {
  uint64_t total = 0;
  for (const auto& f : files) total += f.file_bytes();
  return total;
}

ordered_json ModelPlan::index() const {
  ordered_json map = ordered_json::object();
  uint64_t size = 0;
  for (const auto& f : files)
    for (const auto& t : f.tensors) {
      map[t.name] = f.name;
      size += t.bytes;
    }
  return {{"metadata", {{"total_size", size}}}, {"weight_map", map}};
}

ModelPlan plan_model(const ordered_json& config, double hot_skew, bool successor_head,
                     WeightPrecision experts) {
  if (!(hot_skew >= 0) || !std::isfinite(hot_skew))
    fail("--hot-skew: expected a finite value >= 0, found {}", hot_skew);
  if (!experts.quantized())
    fail(
        "--experts: make-model writes integer experts (int8, int4, int3, int2 with any scales), "
        "not {}",
        precision_name(experts));
  const Dims d(config);
  const int layers = config.at("num_hidden_layers");
  const int first_sparse = config.at("first_k_dense_replace");
  const bool mtp = config.value("num_nextn_predict_layers", 0) > 0;

  FileBuilder resident;
  resident.add(
      packed_matrix("model.embed_tokens.weight", kDense, d.V, d.D, std::sqrt(double(d.D))));
  for (int i = 0; i < layers; ++i) add_layer(resident, d, i, i >= first_sparse, hot_skew);
  if (mtp) {
    const std::string p = fmt::format("model.layers.{}.", layers);
    resident.add(packed_matrix(p + "eh_proj.weight", kDense, d.D, 2 * d.D, 1.0));
    resident.add(norm(p + "enorm.weight", d.D));
    resident.add(norm(p + "hnorm.weight", d.D));
    add_layer(resident, d, layers, true, hot_skew);
    resident.add(norm(p + "shared_head.norm.weight", d.D));
  }
  resident.add(norm("model.norm.weight", d.D));
  PackedPair head = packed_matrix("lm_head.weight", kDense, d.V, d.D, 3.0);
  if (successor_head) {
    // Row j of the head is the embedding of token j - 1: the residual stream
    // keeps the input token's embedding, which matches its own row far above
    // any other (D against ~sqrt(D)), so token t predicts t + 1.
    for (TensorRecipe* r : {&head.values.recipe, &head.scales.recipe}) {
      r->key = "model.embed_tokens.weight";
      r->row_shift = 1;
    }
  }
  resident.add(std::move(head));

  ModelPlan plan;
  plan.files.push_back(std::move(resident).build());
  for (int i = first_sparse; i < layers + (mtp ? 1 : 0); ++i)
    plan.files.push_back(expert_file(d, i, experts));
  for (size_t k = 0; k < plan.files.size(); ++k)
    plan.files[k].name = shard_name(k, plan.files.size());
  return plan;
}

}  // namespace glmrt
