// The matmul cases every kernels plugin must pass: each weight format (f32,
// bf16, int8/int4/int3/int2 with per-row or per-group scales) on fixed edge shapes
// and seeded random ones, against a float64 reference. docs/kernels-conformance.md
// explains the shapes and the tolerances.
#pragma once

#include <glmrt/plugin/weight_format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace glmrt::conformance {

struct WeightFormatSpec {
  uint32_t element_type = GLMRT_F32;
  uint32_t group_size = 0;  // 0 = one scale per row
  /// "f32", "bf16", "int8", "int4-g64", ...
  std::string name() const;
  /// What every kernels plugin must support: the floats and the per-row
  /// integers of ABI 1.0. Per-group formats and element types added since
  /// (int3, the two-level types) may be declined through supports(): a plugin built before them
  /// stays conformant, and the host refuses it only for a profile using them.
  bool required() const {
    return group_size == 0 && element_type <= GLMRT_I2;  // the types of ABI 1.0
  }
  glmrt_weight_format to_format(uint32_t alignment) const;
  /// I rounded up to whole blocks of a ggml type (I itself for other types):
  /// the shapes of the suite, fitted to a format whose rows are blocks.
  int64_t fit_inputs(int64_t I) const {
    const int64_t block = plugin::ggml_block_values(element_type);
    return (I + block - 1) / block * block;
  }
};

/// What the activations x look like.
enum class ActivationKind {
  /// N(0, 1) with a few 8x outliers: exercises int8 activation quantization,
  /// whose error the tolerance allows for.
  kGaussian,
  /// Values in {-c, 0, +c} (c a power of two): int8 quantization with any
  /// block size is exact for these, so integer formats are held to the
  /// float-rounding tolerance and any indexing or packing slip shows.
  kExactInt8,
};

struct MatmulCase {
  WeightFormatSpec format;
  int64_t S = 1;  // activation rows
  int64_t O = 1;  // weight rows (outputs)
  int64_t I = 1;  // inputs
  ActivationKind activations = ActivationKind::kGaussian;
  /// Rows padded to 64 bytes (alignment 64) instead of packed back to back.
  bool padded_rows = false;
  uint64_t seed = 1;
  std::string name() const;  // "int4-g64 S=7 O=17 I=65 gaussian packed"
};

/// Every format of the suite: the required ones, then per-group group sizes
/// 32, 64, 128 and two that are not multiples of 32 (16, 48), the two-level
/// types, then ggml's weight types (ABI 1.5, group size 0).
std::vector<WeightFormatSpec> conformance_formats();

/// The cases of one format: edge shapes (O = 1, I and O off every multiple
/// of 8/16/32/64, I < 32, I = 1), then random shapes for each
/// S in {1, 2, 3, 7, 16, 64}, with both activation kinds and row layouts.
std::vector<MatmulCase> conformance_cases(const WeightFormatSpec& format);

}  // namespace glmrt::conformance
