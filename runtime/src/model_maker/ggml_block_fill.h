// Random but valid rows of a ggml type for `make-model --format gguf`: the
// quantized fields are random bits (any bit pattern is a valid code, grid
// index or sign), the float scales are set so the dequantized weights have
// the RMS asked for and, for types with a min, zero mean. Deterministic:
// a row depends only on its key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

class GgmlRowFiller {
 public:
  /// Measures, with ggml's decoder, the spread of random blocks of `type`
  /// (F32, F16, BF16 or one of plugin::kGgmlWeightTypes).
  explicit GgmlRowFiller(uint32_t ggml_type);

  /// Fills one row of `cols` values (out holds its bytes) with weights of
  /// RMS ~`rms`, drawn from `row_key`.
  void fill_row(uint64_t row_key, double rms, int64_t cols, std::span<std::byte> out) const;

 private:
  uint32_t type_;
  int64_t block_values_ = 1, block_bytes_ = 4;
  double rms_per_scale_ = 1;  // RMS of the values at scale 1
  double min_ratio_ = 0;      // second scale field / first: zero mean
};

}  // namespace glmrt
