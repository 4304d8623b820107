// What `glmrt make-model` writes, before any byte is written: every tensor of
// a glm_moe_dsa config, in which file, at which offset, in which format, and
// how its values are drawn. The layout is the seed program's container form:
// int4 routed experts and int8 dense matrices as U8 plus `<name>.qs` F32
// per-row scales; norms, router and biases F32; one file for the resident
// part, one per MoE layer holding its experts (each starting 4096-aligned,
// its three matrices adjacent) followed by the layer's scales together.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace glmrt {

/// How a tensor's values are drawn (deterministically from the seed and `key`).
struct TensorRecipe {
  enum class Fill {
    packed,      // random symmetric int values: zero mean, max |q| = qmax
    row_scales,  // the F32 scales of a packed matrix: element stddev / stddev of q
    normal,      // F32 N(mean, stddev^2)
    hot_bias,    // e_score_correction_bias: hot_skew * (1 - rank / E)^4 + small noise
  };
  Fill fill = Fill::normal;
  uint32_t packed_type = 0;  // glmrt_element_type for packed and row_scales
  int64_t rows = 1, cols = 1;
  double mean = 0, stddev = 0, hot_skew = 0;
  std::string key;  // randomness key: a matrix and its scales share it
  // packed: row r holds the values of row (r - row_shift) mod rows of the
  // matrix `key` names (lm_head as the embedding moved down by one row)
  int64_t row_shift = 0;
  // row_scales of a per-group or two-level format: inputs per F32 scale (0: one per row)
  uint32_t group_size = 0;
};

struct PlannedTensor {
  std::string name;
  DType dtype = DType::F32;  // U8 (packed) or F32
  std::vector<int64_t> shape;
  StampedFormat stamp = StampedFormat::f32;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;
  TensorRecipe recipe;
  uint32_t stamp_group = 0;  // N of an "int4-gN" stamp (per-group scales in `.gqs`)
  /// Values are drawn row by row: packed matrices and 2-D F32 tensors by
  /// matrix row, the others as one row.
  int64_t generation_rows() const;
};

struct PlannedFile {
  std::string name;                    // model-0000i-of-0000n.safetensors
  std::vector<PlannedTensor> tensors;  // in offset order
  uint64_t data_bytes = 0;             // the data section, alignment gaps included
  /// The safetensors header JSON (with the quant_formats stamp), padded with
  /// spaces so the data section starts 4096-aligned.
  std::string header() const;
  uint64_t file_bytes() const { return 8 + header().size() + data_bytes; }
};

/// Lays tensors out one after the other, each at the next multiple of its
/// alignment.
class PlannedFileBuilder {
 public:
  static constexpr uint64_t kTensorAlignment = 64;
  void add(PlannedTensor t, uint64_t alignment = kTensorAlignment);
  uint64_t end() const { return end_; }
  bool empty() const { return tensors_.empty(); }
  PlannedFile build() &&;

 private:
  std::vector<PlannedTensor> tensors_;
  uint64_t end_ = 0;
};

/// "model-00002-of-00005.safetensors" for index 1 of 5.
std::string shard_name(size_t index, size_t count);

struct ModelPlan {
  std::vector<PlannedFile> files;
  uint64_t total_bytes() const;
  /// model.safetensors.index.json.
  nlohmann::ordered_json index() const;
};

/// Plans every tensor `config` (a glm_moe_dsa config.json) implies.
/// `hot_skew` >= 0 biases each MoE layer's router towards a few experts.
/// `successor_head`: lm_head row j holds embed_tokens row j - 1, so the model
/// predicts the token after its input's id (see MakeModelOptions).
/// `experts`: the routed experts' format (any integer precision; the dense part is int8).
ModelPlan plan_model(const nlohmann::ordered_json& config, double hot_skew,
                     bool successor_head = false, WeightPrecision experts = WeightBits::int4);

/// Alignment of each routed expert's first byte in its file.
inline constexpr uint64_t kExpertAlignment = 4096;

}  // namespace glmrt
