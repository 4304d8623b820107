// The error-feedback factors of a conversion (weights/gptq_quantizer.h),
// computed from the importance file's second moments when a matrix first
// needs them and kept for the next matrices that read the same input: the
// two most recent (a routed expert's gate and up share one factor, its
// own or the layer's, and its down_proj has its own), so memory holds at
// most two [cols, cols] factors.
#pragma once

#include <glmrt/calibrate/importance_file.h>
#include <glmrt/weights/gptq_quantizer.h>

#include <cstdint>
#include <list>
#include <string>
#include <utility>

namespace glmrt {

class GptqFactorCache {
 public:
  GptqFactorCache(const ImportanceTable& table, double damping, double min_rows_per_col);
  /// The factor of `weight`'s input; moments over fewer rows than
  /// min_rows_per_col x cols are too thin, and a routed gate/up then takes
  /// the layer's shared moments (its fallback). nullptr when neither is
  /// there and enough (the matrix is then rounded by rtn).
  const GptqFactor* find(const std::string& weight);

  int64_t matrices_gptq() const { return gptq_; }
  /// Of matrices_gptq(): routed gate/up by the layer's shared moments.
  int64_t matrices_shared() const { return shared_; }
  int64_t matrices_rtn() const { return rtn_; }
  int64_t factors_computed() const { return computed_; }
  double factor_seconds() const { return factor_seconds_; }

 private:
  const ImportanceTable& table_;
  double damping_, min_rows_per_col_;
  std::list<std::pair<std::string, GptqFactor>> recent_;  // most recent first
  int64_t gptq_ = 0, rtn_ = 0, shared_ = 0, computed_ = 0;
  double factor_seconds_ = 0;
};

}  // namespace glmrt
