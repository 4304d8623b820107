#include "checkpoint_generator.h"

#include <fmt/format.h>
#include <glmrt/model_files/safetensors.h>
#include <stdlib.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "reference_config.h"
#include "safetensors_writer.h"

namespace glmrt::test {
namespace {

// Appends tensors with values drawn from one seeded generator.
class TensorMaker {
 public:
  TensorMaker(uint64_t seed, StoredDType dtype, TensorList& out)
      : random_(seed), dtype_(dtype), out_(out) {}

  // W[rows, cols] ~ N(0, (gain / sqrt(cols))^2): unit-RMS inputs give outputs of RMS ~gain.
  void linear(const std::string& name, int64_t rows, int64_t cols, double gain = 1.0) {
    normal(name, {rows, cols}, 0.0, gain / std::sqrt(static_cast<double>(cols)));
  }
  // A norm's scale: 1 + small noise, so a mix-up of norms shows.
  void norm_weight(const std::string& name, int64_t n) { normal(name, {n}, 1.0, 0.1); }
  void normal(const std::string& name, std::vector<int64_t> shape, double mean, double stddev) {
    std::normal_distribution<double> dist(mean, stddev);
    add(name, std::move(shape), [&] { return dist(random_); });
  }
  // Adds `offset` to column `col` of the last tensor made (a 2-D one).
  void shift_last_column(int64_t col, double offset) {
    HostTensor& t = out_.back();
    for (int64_t r = 0; r < t.shape[0]; ++r)
      t.values[r * t.shape[1] + col] += static_cast<float>(offset);
    round_tensor_to_stored(t);
  }
  void shift_last_element(int64_t row, int64_t col, double offset) {
    HostTensor& t = out_.back();
    t.values[row * t.shape[1] + col] += static_cast<float>(offset);
    round_tensor_to_stored(t);
  }
  // Adds `offset` to every value of the last tensor made whose row (first
  // index) satisfies `pick`.
  template <typename Pick>
  void shift_last_rows(Pick pick, double offset) {
    HostTensor& t = out_.back();
    const int64_t width = t.numel() / t.shape[0];
    for (int64_t r = 0; r < t.shape[0]; ++r)
      if (pick(r))
        for (int64_t i = 0; i < width; ++i) t.values[r * width + i] += static_cast<float>(offset);
    round_tensor_to_stored(t);
  }
  void uniform(const std::string& name, std::vector<int64_t> shape, double lo, double hi,
               StoredDType dtype) {
    std::uniform_real_distribution<double> dist(lo, hi);
    add(
        name, std::move(shape), [&] { return dist(random_); }, dtype);
  }

 private:
  template <typename Draw>
  void add(const std::string& name, std::vector<int64_t> shape, Draw draw) {
    add(name, std::move(shape), draw, dtype_);
  }
  template <typename Draw>
  void add(const std::string& name, std::vector<int64_t> shape, Draw draw, StoredDType dtype) {
    HostTensor t{name, std::move(shape), {}, dtype};
    t.values.resize(t.numel());
    for (float& v : t.values) v = static_cast<float>(draw());
    round_tensor_to_stored(t);
    out_.push_back(std::move(t));
  }

  std::mt19937_64 random_;
  StoredDType dtype_;
  TensorList& out_;
};

void add_swiglu(TensorMaker& make, const std::string& prefix, int64_t hidden, int64_t width) {
  make.linear(prefix + "gate_proj.weight", width, hidden);
  make.linear(prefix + "up_proj.weight", width, hidden);
  make.linear(prefix + "down_proj.weight", hidden, width, 0.5);
}

void add_attention(TensorMaker& make, const ReferenceConfig& c, const std::string& p,
                   bool full_indexer) {
  const int64_t D = c.hidden, H = c.heads, L = c.kv_lora, R = c.qk_rope;
  if (full_indexer) {
    const std::string ix = p + "self_attn.indexer.";
    // Indexer dot products lean positive (keys and queries share a constant
    // part on the nope dims, which RoPE leaves alone): with ReLU scores, keys
    // of a row would otherwise often all score exactly 0 and tie.
    const int64_t id = c.index_head_dim, rope = c.qk_rope;
    const auto nope_dim = [id, rope](int64_t r) { return r % id >= rope; };
    make.norm_weight(ix + "k_norm.weight", id);
    make.normal(ix + "k_norm.bias", {id}, 0.0, 0.1);
    make.shift_last_rows(nope_dim, 1.0);
    // Reading the embedding's constant feature (column 0) keeps every head
    // weight positive: scores of opposite signs would tie at exactly 0 after
    // the ReLU and leave the top-k boundary undecided.
    make.linear(ix + "weights_proj.weight", c.index_heads, D, 1.0);
    make.shift_last_column(0, 1.5);
    make.linear(ix + "wk.weight", c.index_head_dim, D);
    make.linear(ix + "wq_b.weight", int64_t{c.index_heads} * id, c.q_lora, 2.0);
    make.shift_last_rows(nope_dim, 2.0 / c.q_lora);
  }
  make.norm_weight(p + "self_attn.kv_a_layernorm.weight", L);
  make.linear(p + "self_attn.kv_a_proj_with_mqa.weight", L + R, D);
  make.linear(p + "self_attn.kv_b_proj.weight", H * (c.qk_nope + c.v_head), L);
  make.linear(p + "self_attn.o_proj.weight", D, H * c.v_head, 0.5);
  make.norm_weight(p + "self_attn.q_a_layernorm.weight", c.q_lora);
  make.linear(p + "self_attn.q_a_proj.weight", c.q_lora, D);
  make.shift_last_column(0, 0.5);  // q_a_layernorm's output shares a constant part
  make.linear(p + "self_attn.q_b_proj.weight", H * c.qk_head(), c.q_lora, 1.5);
}

void add_layer(TensorMaker& make, const ReferenceConfig& c, int layer, bool dense,
               bool full_indexer) {
  const std::string p = fmt::format("model.layers.{}.", layer);
  const int64_t D = c.hidden;
  make.norm_weight(p + "input_layernorm.weight", D);
  if (dense) {
    add_swiglu(make, p + "mlp.", D, c.intermediate);
  } else {
    for (int e = 0; e < c.experts; ++e)
      add_swiglu(make, fmt::format("{}mlp.experts.{}.", p, e), D, c.moe_intermediate);
    // Positive biases keep every choice score positive, so masking dropped
    // groups with 0 (transformers) or -inf (glmrt) chooses the same experts.
    // Widely spread biases keep the top-k boundary away from ties.
    make.uniform(p + "mlp.gate.e_score_correction_bias", {c.experts}, 0.0, 1.5, StoredDType::f32);
    make.linear(p + "mlp.gate.weight", c.experts, D, 1.5);
    add_swiglu(make, p + "mlp.shared_experts.", D, int64_t{c.moe_intermediate} * c.shared_experts);
  }
  make.norm_weight(p + "post_attention_layernorm.weight", D);
  add_attention(make, c, p, full_indexer);
}

}  // namespace

TensorList make_checkpoint_tensors(const CheckpointSpec& spec) {
  const ReferenceConfig c = ReferenceConfig::from_json(spec.config);
  const int64_t V = c.vocab, D = c.hidden;
  TensorList tensors;
  TensorMaker make(spec.seed, spec.dtype, tensors);
  make.normal("model.embed_tokens.weight", {V, D}, 0.0, 1.0);
  make.shift_last_column(0, 3.0);  // a constant feature every token carries
  for (int layer = 0; layer < c.layers; ++layer)
    add_layer(make, c, layer, c.dense_mlp[layer], !c.shared_indexer[layer]);
  if (c.mtp_layers > 0) {
    const std::string p = fmt::format("model.layers.{}.", c.layers);
    make.linear(p + "eh_proj.weight", D, 2 * D);
    // Carries the embedding's constant feature (column 0) through to the layer.
    make.shift_last_element(0, 0, 3.0);
    if (spec.mtp_local_embed_and_head) {
      make.normal(p + "embed_tokens.weight", {V, D}, 0.0, 1.0);
      make.shift_last_column(0, 3.0);
    }
    make.norm_weight(p + "enorm.weight", D);
    make.norm_weight(p + "hnorm.weight", D);
    add_layer(make, c, c.layers, /*dense=*/false, /*full_indexer=*/true);
    if (spec.mtp_local_embed_and_head) make.linear(p + "shared_head.head.weight", V, D, 3.0);
    make.norm_weight(p + "shared_head.norm.weight", D);
  }
  make.norm_weight("model.norm.weight", D);
  if (!c.tie_word_embeddings) make.linear("lm_head.weight", V, D, 3.0);
  return tensors;
}

void write_checkpoint(const std::filesystem::path& dir, const nlohmann::json& config,
                      const TensorList& tensors, int shards) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "config.json", config.dump(2));
  write_safetensors_checkpoint(dir, tensors, shards);
}

TensorList read_checkpoint_tensors(const std::filesystem::path& dir) {
  const TensorDirectory directory = TensorDirectory::open(dir);
  TensorList tensors;
  for (const TensorInfo& info : directory.tensors())
    tensors.push_back({info.name, info.shape, directory.read_f32(info), StoredDType::f32});
  return tensors;
}

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace glmrt::test
