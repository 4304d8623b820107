// Quantized matrices: the packing the core writes is the one the kernels read.
#include <glmrt/host/plugin_host.h>
#include <glmrt/weights/linear.h>
#include <glmrt/weights/matrix.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace glmrt {
namespace {

struct Case {
  WeightBits bits;
  double max_relative_row_error;  // |w - dequant(w)| / max|row|, from the rounding step
};

class MatrixTest : public ::testing::TestWithParam<Case> {};

TEST_P(MatrixTest, DequantizedRowsAndKernelProductsAgreeWithTheQuantizationStep) {
  const Case c = GetParam();
  const int64_t rows = 13, cols = 37;  // odd sizes exercise partial bytes
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> w(rows * cols), x(3 * cols);
  for (auto& v : w) v = normal(rng);
  for (auto& v : x) v = normal(rng);
  const Matrix m = Matrix::from_f32(w, rows, cols, c.bits, nullptr, "test");

  std::vector<float> deq(rows * cols), row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    m.dequantize_row(r, row);
    float amax = 0;
    for (int64_t i = 0; i < cols; ++i) amax = std::max(amax, std::fabs(w[r * cols + i]));
    for (int64_t i = 0; i < cols; ++i) {
      EXPECT_LE(std::fabs(row[i] - w[r * cols + i]), c.max_relative_row_error * amax)
          << "row " << r << " col " << i;
      deq[r * cols + i] = row[i];
    }
  }

  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHost host(
      std::vector<std::filesystem::path>{std::filesystem::path(GLMRT_BUILD_DIR) / "plugins"});
  auto kernels = host.create_kernels({"kernels-scalar", {}, ""}, services);
  KernelsBackend backend(*kernels, kernels.info().abi_minor, kernels.info().name);
  std::vector<float> y(3 * rows);
  linear(backend, x, 3, m, y);
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t r = 0; r < rows; ++r) {
      double expect = 0, scale = 0;
      for (int64_t i = 0; i < cols; ++i) {
        expect += double(x[s * cols + i]) * deq[r * cols + i];
        scale += std::fabs(double(x[s * cols + i]) * deq[r * cols + i]);
      }
      EXPECT_NEAR(y[s * rows + r], expect, 1e-5 * scale + 1e-6) << "s " << s << " r " << r;
    }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, MatrixTest,
                         ::testing::Values(Case{WeightBits::f32, 0.0},
                                           Case{WeightBits::bf16, 1.0 / 256},
                                           Case{WeightBits::int8, 0.5 / 127 + 1e-6},
                                           Case{WeightBits::int4, 0.5 / 7 + 1e-6},
                                           // int2 clamps to [-2, 1] x max/1: the positive
                                           // extreme rounds to 1, the error stays < max
                                           Case{WeightBits::int2, 1.0 + 1e-6}));

}  // namespace
}  // namespace glmrt
