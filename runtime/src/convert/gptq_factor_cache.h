// The error-feedback factors of a conversion (weights/gptq_quantizer.h),
// computed from the importance file's second moments when a matrix first
// needs them and kept for the next matrices that read the same input: the
// two most recent (a layer's routed experts alternate gate/up, which share
// the layer's factor, with down_proj, which has its own), so memory holds at
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
  /// The factor of `weight`'s input; nullptr when the file has no second
  /// moments for it or they are over fewer rows than min_rows_per_col x
  /// cols (the matrix is then rounded by rtn).
  const GptqFactor* find(const std::string& weight);

  int64_t matrices_gptq() const { return gptq_; }
  int64_t matrices_rtn() const { return rtn_; }
  int64_t factors_computed() const { return computed_; }
  double factor_seconds() const { return factor_seconds_; }

 private:
  const ImportanceTable& table_;
  double damping_, min_rows_per_col_;
  std::list<std::pair<std::string, GptqFactor>> recent_;  // most recent first
  int64_t gptq_ = 0, rtn_ = 0, computed_ = 0;
  double factor_seconds_ = 0;
};

}  // namespace glmrt
