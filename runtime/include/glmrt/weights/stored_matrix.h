// What a file holds for a weight matrix W[rows, cols]: a float tensor (F32,
// BF16, F16, F64) of that shape, or packed int8/int4/int2 values (U8) with one
// F32 scale per row in `<name>.qs` — the container form — or F32 per-group
// scales [rows, ceil(cols / g)] in `<name>.gqs`. The packed format is the
// file's stamp when it has one (checked against the byte count), else told by
// the byte count; the group size is the stamp's ("int4-g64"), else cols
// divided by the scales' second dimension when that is exact.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <cstdint>
#include <string>

namespace glmrt {

struct StoredMatrix {
  const TensorInfo* values = nullptr;
  const TensorInfo* scales = nullptr;  // `<name>.qs` or `<name>.gqs` when pre-quantized
  uint32_t packed_type = 0;            // glmrt_element_type (I8/I4/I2) when pre-quantized
  uint32_t group_size = 0;             // of `.gqs` scales; 0 for per-row `.qs`
  int64_t rows = 0, cols = 0;

  bool prequantized() const { return scales != nullptr; }
  /// The in-memory element type whose bytes equal the stored ones (F32, BF16
  /// or the packed type), or -1 for a dtype kernels do not read (F16, F64).
  int element_type() const;
  /// The element type precision `stored` keeps the matrix in: element_type(),
  /// or for F16 and a GGUF's ggml blocks the ggml element type holding the
  /// same bytes; -1 when no element type does (F64, FP8).
  int kept_element_type() const;
  /// "int8", "int4-g64", "bf16", "F16", ...: for messages.
  std::string format_name() const;
};

/// The element type whose bytes equal those `t` stores (F32, BF16, F16 and
/// ggml blocks as the ggml element types), or -1 when there is none (F64,
/// FP8, packed U8, whose type its scales tell).
int kept_element_type(const TensorInfo& t);

/// `name` of its file, stored as a type precision `stored` cannot keep:
/// throws saying which type and what to choose instead.
[[noreturn]] void fail_not_keepable(const TensorDirectory& dir, const TensorInfo& t);

/// Finds `name` in `dir` and checks it holds a rows x cols matrix. Errors name
/// the tensor, its file and what was expected: a missing tensor, a float
/// tensor of another shape or a non-float dtype, packed data that is not U8 or
/// whose byte count fits no packed format (or not the stamped one), scales
/// that are not F32 [rows], a stamp contradicting the presence of scales.
StoredMatrix find_stored_matrix(const TensorDirectory& dir, const std::string& name, int64_t rows,
                                int64_t cols);

}  // namespace glmrt
