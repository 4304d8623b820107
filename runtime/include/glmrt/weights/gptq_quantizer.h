// Error-compensating rounding (GPTQ / OBQ, Frantar et al. 2022): a row of a
// weight matrix is quantized one input column at a time, and each column's
// rounding error is fed forward into the columns not yet quantized through
// the Cholesky factor of the inverse of the inputs' second moments H = X^T X,
// so the error of the product X w^T, not of w, is what the rounding keeps
// small. Rows are independent given the factor: a matrix is quantized block
// of rows by block of rows, and the factor of one H serves every matrix that
// reads the same inputs (a layer's routed experts' gate and up). See
// docs/convert.md "Error-compensating rounding".
#pragma once

#include <glmrt/weights/row_codec.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace glmrt {

/// Sets the calling thread's SSE control to flush denormal results and
/// inputs to zero while it lives: the inverse factor's far off-diagonal
/// entries decay towards 1e-38 and below, where every operation on a
/// denormal costs ~100 cycles (a 2048-wide factor took 12 s instead of 1).
class DenormalsAsZero {
 public:
  DenormalsAsZero();
  ~DenormalsAsZero();
  DenormalsAsZero(const DenormalsAsZero&) = delete;
  DenormalsAsZero& operator=(const DenormalsAsZero&) = delete;

 private:
  unsigned saved_;
};

/// What gptq_factor computes from one H.
struct GptqFactor {
  int64_t cols = 0;
  /// U [cols, cols] row-major, upper triangular (zeros below the diagonal):
  /// the damped H's inverse is U^T U.
  std::vector<float> upper;
  /// H's own diagonal (undamped, the sums of x^2): the importances of the
  /// per-group scale search, as `rtn` weights it by mean x^2.
  std::vector<float> diagonal;
};

/// Damping added to H's diagonal, as a fraction of its mean diagonal (GPTQ's
/// percdamp 0.01): it keeps H positive definite when inputs are correlated or
/// few and limits how far an error is pushed onto weakly seen columns.
inline constexpr double kGptqDefaultDamping = 0.01;

/// The factor of H + damping * mean(diag H) * I, with H [cols, cols]
/// row-major (symmetric; the sums or means of x x^T, scale does not matter).
/// Computed in place in H's own buffer, in f32 with dot products summed in
/// double (H = V V^T with V upper triangular, then U = V^-1), on the OpenMP
/// threads: the factor takes no memory beyond H's. Throws naming `what` when
/// H is not a finite square matrix with a positive mean diagonal.
GptqFactor gptq_factor(std::vector<float> second_moments, int64_t cols, double damping,
                       std::string_view what);

/// When a group's scale is chosen: `before` the sweep, from the row as given
/// (GPTQ's static groups), or `during` it, when the sweep reaches the group
/// (two-level formats: the block of 256 inputs), from the values the errors
/// of earlier columns have moved (GPTQ's default).
enum class GptqScales { before, during };

/// Quantizes `n` rows (row-major [n, f.cols] f32, changed in place: the
/// errors are fed into them) into rows [first_row, first_row + n) of `dst`
/// (an integer format: per row, per group or two-level; dst.importance is
/// ignored, f.diagonal weights the scale search), on the OpenMP threads.
/// Per-row formats keep the max-abs scale of the row as given.
void gptq_encode_rows(std::span<float> rows, int64_t n, const GptqFactor& f,
                      const MatrixStorage& dst, int64_t first_row, GptqScales when);

}  // namespace glmrt
