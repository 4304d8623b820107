// The inverse-Hessian factor of error-compensating rounding (gptq_quantizer.h).
#include <glmrt/base/error.h>
#include <glmrt/weights/gptq_quantizer.h>

#include <xmmintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace glmrt {

DenormalsAsZero::DenormalsAsZero() : saved_(_mm_getcsr()) {
  _mm_setcsr(saved_ | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
}
DenormalsAsZero::~DenormalsAsZero() {
  _mm_setcsr(saved_);
}

namespace {

// H = V V^T with V upper triangular, in place in `a` (row-major; only the
// upper triangle is read and written): the Cholesky factorisation of H with
// rows and columns reversed. Rows of V are filled from the last: each entry
// is a dot product of two contiguous row tails, summed in double. False when
// a pivot is not positive (H not positive definite).
bool factor_upper_in_place(std::vector<float>& a, int64_t n) {
  const DenormalsAsZero flushed;
  for (int64_t j = n - 1; j >= 0; --j) {
    float* row_j = a.data() + j * n;
    double pivot = row_j[j];
    for (int64_t k = j + 1; k < n; ++k) pivot -= static_cast<double>(row_j[k]) * row_j[k];
    if (!(pivot > 0.0)) return false;
    const double v_jj = std::sqrt(pivot);
    row_j[j] = static_cast<float>(v_jj);
#pragma omp parallel
    {
      const DenormalsAsZero flushed_here;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < j; ++i) {
        float* row_i = a.data() + i * n;
        double s = row_i[j];
        for (int64_t k = j + 1; k < n; ++k) s -= static_cast<double>(row_i[k]) * row_j[k];
        row_i[j] = static_cast<float>(s / v_jj);
      }
    }
  }
  return true;
}

// V^-1 of an upper triangular V, in place, by rows from the last: V X = I
// gives row i of X as -(1/V_ii) * sum_{k>i} V_ik X_k (rows k > i of X are
// already in place) with X_ii = 1/V_ii. The sum runs as row axpys over
// blocks of columns, one block per thread at a time.
void invert_upper_in_place(std::vector<float>& a, int64_t n) {
  const DenormalsAsZero flushed;
  constexpr int64_t kColumns = 64;
  std::vector<float> v_row(static_cast<size_t>(n));
  for (int64_t i = n - 1; i >= 0; --i) {
    float* row_i = a.data() + i * n;
    const double inv = 1.0 / row_i[i];
    for (int64_t k = i + 1; k < n; ++k) {
      v_row[k] = row_i[k];
      row_i[k] = 0.f;
    }
#pragma omp parallel
    {
      const DenormalsAsZero flushed_here;
#pragma omp for schedule(static)
      for (int64_t first = i + 1; first < n; first += kColumns) {
        const int64_t end = std::min(n, first + kColumns);
        for (int64_t k = i + 1; k < end; ++k) {
          const float v = v_row[k];
          const float* x_k = a.data() + k * n;
          for (int64_t j = std::max(first, k); j < end; ++j) row_i[j] += v * x_k[j];
        }
      }
    }
    for (int64_t j = i + 1; j < n; ++j) row_i[j] = static_cast<float>(-inv * row_i[j]);
    row_i[i] = static_cast<float>(inv);
  }
}

}  // namespace

GptqFactor gptq_factor(std::vector<float> second_moments, int64_t cols, double damping,
                       std::string_view what) {
  if (cols <= 0 || static_cast<int64_t>(second_moments.size()) != cols * cols)
    fail("{}: second moments of {} values are no {}x{} matrix", what, second_moments.size(), cols,
         cols);
  if (!(damping >= 0.0) || !std::isfinite(damping))
    fail("{}: damping {} must be a finite fraction >= 0", what, damping);
  GptqFactor f;
  f.cols = cols;
  f.diagonal.resize(static_cast<size_t>(cols));
  double mean = 0.0;
  for (int64_t i = 0; i < cols; ++i) {
    const float d = second_moments[i * cols + i];
    if (!std::isfinite(d) || d < 0.f)
      fail("{}: diagonal value {} is {}: second moments are finite and non-negative", what, i, d);
    f.diagonal[i] = d;
    mean += d;
  }
  mean /= static_cast<double>(cols);
  if (!(mean > 0.0)) fail("{}: the second moments' diagonal is all zero (no input seen)", what);
  for (size_t k = 0; k < second_moments.size(); ++k)
    if (!std::isfinite(second_moments[k]))
      fail("{}: value {} is {}: second moments are finite", what, k, second_moments[k]);
  const double added = damping * mean;
  // A column never seen (x always 0) gets the mean as its damping, as GPTQ
  // sets a dead column's diagonal to 1: its rounding error goes nowhere.
  for (int64_t i = 0; i < cols; ++i) {
    float& d = second_moments[i * cols + i];
    d = static_cast<float>(d + (d > 0.f ? added : mean));
  }
  // In f32, in place (GPTQ's own factor is f32): the matrix's one buffer is
  // the whole working set, 151 MB at GLM-5's 6144 inputs.
  if (!factor_upper_in_place(second_moments, cols))
    fail(
        "{}: the damped second moments are not positive definite (damping {} of the mean "
        "diagonal); raise the damping",
        what, damping);
  invert_upper_in_place(second_moments, cols);
  for (int64_t i = 1; i < cols; ++i)
    std::fill_n(second_moments.begin() + i * cols, i, 0.f);  // below the diagonal
  f.upper = std::move(second_moments);
  return f;
}

}  // namespace glmrt
