// Row-by-row conversion between the forms a weight matrix takes: a stored
// tensor (F32/BF16/F16/F64, or packed int8/int4/int2 values with one F32 scale
// per row, as a container holds them) and the in-memory formats kernels read.
// Rows are independent, so conversions run in parallel and never need the
// whole matrix as f32.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace glmrt {

/// Writable packed storage of a matrix (see Matrix::storage()).
struct MatrixStorage {
  uint32_t type = 0;  // glmrt_element_type
  int64_t rows = 0, cols = 0, row_bytes = 0;
  std::byte* data = nullptr;
  /// [rows, scales_per_row()] for the integer types, else nullptr.
  float* scales = nullptr;
  /// Inputs sharing a scale (integer types); 0 = one scale per row.
  uint32_t group_size = 0;
  /// Optional [cols] non-negative weights of each input in the error the
  /// per-group scale search minimises (activation statistics), else nullptr.
  const float* importance = nullptr;

  int64_t scales_per_row() const { return scales_per_row_of(cols, group_size); }
  static int64_t scales_per_row_of(int64_t cols, uint32_t group) {
    return group ? (cols + group - 1) / group : 1;
  }
};

/// A row-major matrix [rows, cols] as stored in a file's bytes.
struct SourceMatrix {
  /// F32, BF16, F16 or F64 for float tensors; U8 for packed values.
  DType dtype = DType::F32;
  /// glmrt_element_type of packed values (I8, I4, I2) when dtype is U8.
  uint32_t packed_type = 0;
  std::span<const std::byte> data;
  std::span<const float> scales;  // [rows, scales per row] when packed
  int64_t rows = 0, cols = 0;
  uint32_t group_size = 0;  // of packed values; 0 = one scale per row
  /// glmrt_ggml_type of the blocks when dtype is GGML (a GGUF's quantized tensor).
  uint32_t ggml_type = 0;

  /// Bytes of one stored row.
  int64_t row_bytes() const;
  /// Row r as f32 (packed values times their row's scale).
  void decode_row(int64_t r, std::span<float> out) const;
  /// Throws naming `what` when the byte and scale counts do not fit rows x cols.
  void check(std::string_view what) const;
};

/// Encodes f32 values into row r of `dst`: copies (f32), rounds to nearest
/// even (bf16), or quantizes symmetrically: per row, s = max|w| / qmax, q =
/// round(w / s) clamped to the type's range (the seed program's rule, so its
/// containers and ours agree bit for bit); per group, with the clipping
/// search of group_quantizer.h (weighted by dst.importance when set).
void encode_row(std::span<const float> values, const MatrixStorage& dst, int64_t r);

/// Packs one row's codes (`codes.size()` = the row's columns, each in the
/// type's range) into `out` as encode_row lays out GLMRT_I8/I4/I3/I2 values
/// (a two-level format's group codes follow separately).
void pack_row_codes(std::span<const int8_t> codes, uint32_t type, std::byte* out);

/// Converts the rows of `src` into rows [dst_first_row, dst_first_row +
/// src.rows) of `dst`, on the calling thread.
void convert_rows(const SourceMatrix& src, const MatrixStorage& dst, int64_t dst_first_row = 0);
/// Converts every row of `src` into `dst` (same shape) on the OpenMP threads.
void convert_matrix(const SourceMatrix& src, const MatrixStorage& dst);

}  // namespace glmrt
