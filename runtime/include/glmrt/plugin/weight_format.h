// How a weight matrix W[O, I] (O output rows, I inputs) is laid out in memory.
// Part of the v1 contract: a new quantization format is a new element type or
// packing value, never a major ABI bump.
#pragma once

#include <glmrt/plugin/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum glmrt_element_type {
  GLMRT_F32 = 0,   // 4 bytes per value
  GLMRT_BF16 = 1,  // 2 bytes per value (upper half of an IEEE float)
  GLMRT_I8 = 2,    // signed int8, 1 byte per value
  GLMRT_I4 = 3,  // 2 values per byte: element 2k in the low nibble, 2k+1 in the high; stored as v+8
  GLMRT_I2 = 4,  // 4 values per byte: element 4k+j in bits 2j..2j+1; stored as v+2
} glmrt_element_type;

/// Symmetric quantization: value = q * scale. f32 and bf16 carry no scales.
typedef struct glmrt_weight_format {
  uint32_t struct_size;
  uint32_t element_type;  // glmrt_element_type
  /// Inputs sharing one scale within a row; 0 = one scale per row.
  uint32_t group_size;
  /// Packing variant of element_type; 0 = the layout documented above.
  uint32_t packing;
  /// Alignment in bytes the data pointer and row stride honour (at least 1).
  uint32_t alignment;
} glmrt_weight_format;

/// A view of W[O, I]. Row o starts at data + o * row_stride_bytes. Scales are
/// F32, [O] for per-row or [O, ceil(I / group_size)] for per-group formats.
typedef struct glmrt_weight_view {
  glmrt_weight_format format;
  const void* data;
  const float* scales;
  int64_t rows;  // O
  int64_t cols;  // I
  int64_t row_stride_bytes;
} glmrt_weight_view;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

/// Bytes one row of `cols` values takes in the packed layout of `type`.
constexpr int64_t packed_row_bytes(uint32_t type, int64_t cols) {
  switch (type) {
    case GLMRT_F32:
      return cols * 4;
    case GLMRT_BF16:
      return cols * 2;
    case GLMRT_I8:
      return cols;
    case GLMRT_I4:
      return (cols + 1) / 2;
    case GLMRT_I2:
      return (cols + 3) / 4;
    default:
      return -1;
  }
}

/// "f32", "bf16", "int8", "int4", "int2", or nullptr for a type v1 does not define.
constexpr const char* element_type_name(uint32_t type) {
  switch (type) {
    case GLMRT_F32:
      return "f32";
    case GLMRT_BF16:
      return "bf16";
    case GLMRT_I8:
      return "int8";
    case GLMRT_I4:
      return "int4";
    case GLMRT_I2:
      return "int2";
    default:
      return nullptr;
  }
}

constexpr bool is_quantized(uint32_t type) {
  return type == GLMRT_I8 || type == GLMRT_I4 || type == GLMRT_I2;
}

}  // namespace glmrt::plugin
#endif
