// What `glmrt convert` writes, decided before any byte is: every output
// tensor, its file and offset, its format and where its values come from.
// Resident tensors fill files of at most ConvertOptions::max_shard_bytes (in
// layer order); each MoE layer's routed experts get a file of their own, each
// expert starting 4096-aligned with its three matrices and their scales
// adjacent (gate, gate scales, up, up scales, down, down scales), so one read
// fetches it. Per-row formats are the seed program's (U8 [rows, row bytes] +
// `<name>.qs` F32 [rows]); per-group ones put F32 [rows, ceil(cols / g)] in
// `<name>.gqs`; every tensor is stamped in `quant_formats`.
#pragma once

#include <glmrt/convert/convert_options.h>
#include <glmrt/convert/tensor_roles.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/model_maker/model_plan.h>

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace glmrt {

struct ConvertedPart {
  enum class Kind { copy, values, scales };
  Kind kind = Kind::copy;
  const TensorInfo* source = nullptr;
  const TensorInfo* block_scales = nullptr;  // of an F8_E4M3 source
  TensorRole role = TensorRole::kept;
  WeightPrecision precision;
};

struct RoleTotals {
  int tensors = 0;
  uint64_t params = 0, source_bytes = 0, bytes = 0;  // bytes: values + scales written
  double bits_per_weight() const { return params ? 8.0 * double(bytes) / double(params) : 0.0; }
};

struct ConversionPlan {
  ModelPlan layout;                               // files, tensors, offsets (header(), index())
  std::vector<std::vector<ConvertedPart>> parts;  // [file][tensor], parallel to layout
  std::map<TensorRole, RoleTotals> totals;
  /// The matrices of each class by the precision they are stored at.
  std::map<std::pair<TensorRole, std::string>, RoleTotals> format_totals;
  uint64_t source_bytes = 0;  // bytes read from the checkpoint
  std::array<int64_t, 2> fp8_block{128, 128};
};

/// Plans the conversion of `dir` (a checkpoint whose config.json has
/// `main_layers` decoder layers). Throws naming the tensor and file for a
/// matrix of a dtype convert cannot read or FP8 without its block scales.
ConversionPlan plan_conversion(const TensorDirectory& dir, const ConvertOptions& options,
                               int main_layers, std::array<int64_t, 2> fp8_block);

}  // namespace glmrt
