// What `glmrt convert` is asked to do (see docs/convert.md).
#pragma once

#include <glmrt/base/weight_precision.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace glmrt {

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
  /// Output files of resident tensors are cut at about this size.
  uint64_t max_shard_bytes = 4ull << 30;
};

}  // namespace glmrt
