// One matmul case made concrete: random weights packed exactly as
// weight_format.h documents, activations, and the float64 reference with a
// tolerance per output.
#pragma once

#include "guarded_buffer.h"

#include <glmrt/conformance/matmul_case.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace glmrt::conformance {

class MatmulProblem {
 public:
  explicit MatmulProblem(const MatmulCase& matmul_case);

  const MatmulCase& spec() const { return spec_; }
  glmrt_weight_view view() const;
  std::span<const float> x() const;

  /// W[o, i] exactly (code x scale for integer formats), decoded from the
  /// packed bytes the plugin reads.
  double weight(int64_t o, int64_t i) const;
  /// Magnitude of the largest value W[o, i]'s storage can hold: |w| for
  /// floats, scale x 2^(bits-1) for integers.
  double weight_range(int64_t o, int64_t i) const;

 private:
  void fill_weights(uint64_t seed);
  void fill_activations(uint64_t seed);
  void fill_ggml_blocks(std::mt19937_64& random);
  int64_t groups_per_row() const;
  float scale_of(int64_t o, int64_t i) const;

  MatmulCase spec_;
  int64_t row_stride_ = 0;
  int64_t data_bytes_ = 0;
  GuardedBuffer data_;
  GuardedBuffer scales_;
  GuardedBuffer x_;
  /// ggml blocks: W dequantized by the library ([O, I]), and per value the
  /// largest |w| of its block (what the f32 arithmetic of a block may meet).
  std::vector<float> ggml_values_, ggml_block_max_;
};

/// What a conforming plugin's y[s, o] must be close to, per output (index s*O + o).
struct ReferenceOutput {
  std::vector<double> y;
  /// Bound on |y - reference|: f32 rounding plus, for integer formats with
  /// gaussian activations, the worst case of int8 activation quantization.
  std::vector<double> tolerance;
  /// The f32-rounding part of the tolerance alone.
  std::vector<double> rounding;
  /// Standard deviation of the error per-row int8 activation quantization
  /// would add (0 when activations are exactly representable or weights float).
  std::vector<double> quantization_sigma;
};

ReferenceOutput compute_reference(const MatmulProblem& problem);

}  // namespace glmrt::conformance
