// Enough copies of one random weight matrix that cycling through them streams
// every iteration from RAM, never from the last-level cache.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/plugin/kernels.h>
#include <glmrt/plugin/weight_format.h>

#include <cstdint>
#include <vector>

namespace glmrt::bench {

class WeightCopies {
 public:
  /// Copies of W[rows, cols] in `format` (random codes, or N(0,1)-like floats),
  /// totalling at least `min_total_bytes`.
  WeightCopies(const glmrt_weight_format& format, int64_t rows, int64_t cols,
               uint64_t min_total_bytes);

  size_t count() const { return data_.size(); }
  /// The view of copy k.
  glmrt_weight_view view(size_t k) const;
  /// Packs every copy in place as `kernels` offers for this format (ABI
  /// 1.7) and returns true; false, changing nothing, when it offers none.
  /// Throws std::runtime_error with the plugin's message when packing fails.
  bool pack_rows(plugin::Kernels& kernels);
  /// Bytes one product reads: packed weights plus scales.
  uint64_t bytes_per_copy() const { return data_bytes_ + scale_bytes_; }

 private:
  glmrt_weight_format format_;
  int64_t rows_, cols_, row_stride_;
  uint64_t data_bytes_, scale_bytes_;
  std::vector<AlignedBlock> data_;
  std::vector<AlignedBlock> scales_;
};

}  // namespace glmrt::bench
