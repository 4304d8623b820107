// What `glmrt convert` is asked to do (see docs/convert.md).
#pragma once

#include <glmrt/base/weight_precision.h>
#include <glmrt/weights/gptq_quantizer.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace glmrt {

/// How integer formats are rounded: `rtn` rounds each value to its group's
/// scale (the importance-weighted clipping search of group_quantizer.h);
/// `gptq` also feeds each column's rounding error forward through the
/// calibration inputs' second moments (gptq_quantizer.h).
enum class QuantMethod { rtn, gptq };

struct ConvertOptions {
  std::filesystem::path from, to;
  WeightPrecision experts{WeightBits::int4, 64};
  WeightPrecision dense{WeightBits::int8};
  /// Unset: bf16, or int8 when dense is int4 or lower (as the runtime's
  /// load-time rule for embed_tokens/lm_head).
  std::optional<WeightPrecision> embed, lm_head;
  std::optional<WeightPrecision> kv_b;  // unset: as dense
  /// PATTERN=FMT in order; the last pattern (fnmatch) matching a matrix wins.
  std::vector<std::pair<std::string, WeightPrecision>> overrides;
  /// A named mix (convert_recipe.h), expanded once the model's layers are
  /// known: it sets experts and dense, and its rules go ahead of `overrides`.
  std::string recipe;
  bool drop_mtp = false;
  bool dry_run = false;
  /// Replace an existing OUT_DIR convert wrote (never another folder) /
  /// discard a stale OUT_DIR.partial.
  bool force = false;
  /// Importance statistics weighting the per-group scale search: a file of
  /// `glmrt calibrate` (importance_file.h); matrices it lacks are unweighted.
  std::filesystem::path importance;
  /// Unset: gptq when the statistics hold second moments, else rtn (with a
  /// note). gptq needs --importance with second moments.
  std::optional<QuantMethod> method;
  double gptq_damping = kGptqDefaultDamping;  // fraction of H's mean diagonal
  GptqScales gptq_scales = GptqScales::during;
  /// A matrix whose second moments are over fewer rows than this many times
  /// its columns (a routed expert few tokens reached) is rounded by rtn.
  double gptq_min_rows_per_col = 1.0;
  /// Output files of resident tensors are cut at about this size.
  uint64_t max_shard_bytes = 4ull << 30;
};

}  // namespace glmrt
