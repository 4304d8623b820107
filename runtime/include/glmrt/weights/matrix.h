// A weight matrix W[O, I] held in memory in one of the formats the kernels
// plugins understand (f32, bf16, int8/int4/int2 with one scale per row or one
// per group of inputs).
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/base/weight_precision.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/row_codec.h>

#include <cstdint>
#include <span>
#include <string>

namespace glmrt {

class Matrix {
 public:
  Matrix() = default;
  /// Uninitialised storage for a [rows, cols] matrix of element type `type`
  /// (plus per-row scales for the integer types), to be filled through
  /// storage(). The storage stays at the same address when the Matrix moves.
  static Matrix allocate(uint32_t type, int64_t rows, int64_t cols, MemoryBudget* budget,
                         const std::string& category, uint32_t group_size = 0);
  /// The same, with the packed bytes placed for an O_DIRECT read of a file
  /// holding them at byte `file_offset`: their address is congruent to it
  /// modulo kDirectReadAlignment, and the memory around them covers the
  /// aligned window such a read writes (see direct_read_window()).
  static Matrix allocate_for_direct_read(uint32_t type, int64_t rows, int64_t cols,
                                         uint64_t file_offset, MemoryBudget* budget,
                                         const std::string& category, uint32_t group_size = 0);
  /// Converts row-major f32 values [rows, cols] into `precision`
  /// (symmetric per-row or per-group quantization for the integer formats).
  static Matrix from_f32(std::span<const float> values, int64_t rows, int64_t cols,
                         WeightPrecision precision, MemoryBudget* budget,
                         const std::string& category);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  uint32_t element_type() const { return type_; }
  /// Inputs sharing a scale (0: one scale per row, or no scales).
  uint32_t group_size() const { return group_size_; }
  bool empty() const { return rows_ == 0; }
  uint64_t bytes() const { return data_.size() + scales_.size(); }

  /// Block size and memory alignment O_DIRECT reads are made with.
  static constexpr uint64_t kDirectReadAlignment = 4096;

  /// Writable access to the packed bytes and scales.
  MatrixStorage storage();

  /// The view a kernels plugin multiplies with.
  glmrt_weight_view view() const;
  /// Rows [first, first + count) as a view. Of packed rows, only a view that
  /// starts at a group's first row and ends at a group's end or the last row.
  glmrt_weight_view view_rows(int64_t first, int64_t count) const;

  /// Row r in f32 (embedding lookup); never of packed rows.
  void dequantize_row(int64_t r, std::span<float> out) const;

  /// The kernels plugin's packing of these rows (ABI 1.7), 0 for none.
  uint32_t packing() const { return packing_; }
  /// Records that the bytes now hold the plugin's `packing`, in groups of
  /// `group_rows` rows (KernelsBackend::pack).
  void set_packing(uint32_t packing, int64_t group_rows);

 private:
  int64_t rows_ = 0, cols_ = 0, row_bytes_ = 0;
  uint32_t type_ = GLMRT_F32;
  uint32_t group_size_ = 0;
  uint32_t packing_ = 0;
  int64_t packed_group_rows_ = 1;
  int64_t scales_per_row() const { return MatrixStorage::scales_per_row_of(cols_, group_size_); }
  std::byte* data() const { return data_.data() + data_offset_; }

  AlignedBlock data_;  // the packed bytes start data_offset_ bytes in
  size_t data_offset_ = 0;
  AlignedBlock scales_;  // f32 [rows, scales_per_row()] for quantized types
};

/// The element type a profile's precision stores matrices as.
uint32_t element_type_for(WeightPrecision precision);

/// Converts a bf16 bit pattern to f32 exactly, and f32 to bf16 rounding to nearest even.
inline float bf16_to_f32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
inline uint16_t f32_to_bf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace glmrt
