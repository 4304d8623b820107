// Reads rows of a checkpoint's matrix as f32, block by block, so a conversion
// never holds a whole tensor: F32, BF16, F16 and F64 are decoded exactly (F64
// rounded), FP8 e4m3 (F8_E4M3) is multiplied by its block scales
// `<name>_scale_inv` ([ceil(rows / bh), ceil(cols / bw)], as GLM-5-FP8 and
// DeepSeek-V3 ship them), exactly as w = fp8 * scale_inv in f32.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

class SourceBlockReader;

/// f32 value of an FP8 e4m3 ("fn": no infinities, S.1111.111 is NaN) byte.
float f8_e4m3_to_f32(uint8_t bits);

class SourceRows {
 public:
  /// `t` is a 2-D matrix tensor of `dir`; `block_scales` its FP8 scales (only
  /// and always when t is F8_E4M3), read at once; `block` the scales' block
  /// shape (rows, cols). Throws naming the tensor and file on a dtype or
  /// shape the conversion cannot read.
  SourceRows(const TensorDirectory& dir, const TensorInfo& t, const TensorInfo* block_scales,
             std::array<int64_t, 2> block);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  uint64_t row_bytes() const { return row_bytes_; }
  /// The stored bytes of rows [first, first + count) read into `slot` of
  /// `reader`: the part of a conversion that waits on the drive, run ahead of
  /// decoding. A short read (a truncated file) throws naming file and tensor.
  std::span<const std::byte> read_raw(SourceBlockReader& reader, int slot, int64_t first,
                                      int64_t count) const;
  /// Row `first + r` as f32 into `out` (cols floats), from the bytes
  /// read_raw(first, ...) returned; false when a value is NaN or infinite
  /// (checked on the way, vectorised). Thread-safe: rows decode in parallel.
  bool decode_row(std::span<const std::byte> raw, int64_t first, int64_t r,
                  std::span<float> out) const;

 private:
  const TensorDirectory& dir_;
  const TensorInfo& t_;
  int64_t rows_ = 0, cols_ = 0;
  uint64_t row_bytes_ = 0;
  std::vector<float> scales_;  // FP8 block scales, [ceil(rows/bh), ceil(cols/bw)]
  std::array<int64_t, 2> block_{128, 128};
  int64_t scale_cols_ = 0;
  std::array<float, 256> fp8_table_{};  // e4m3 byte -> f32
};

}  // namespace glmrt
