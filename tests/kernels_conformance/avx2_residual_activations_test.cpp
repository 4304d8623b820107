// kernels-avx2's `activations: int8x2`: ggml blocks meet the int8
// activations and their int8-quantized rounding residual. It must pass the
// whole suite on the ggml types, and come close to the f32-activation result
// where plain int8 does not (what keeps near-tie router and DSA choices).
#include <glmrt/conformance/kernels_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace glmrt::conformance {
namespace {

namespace fs = std::filesystem;

const fs::path kAvx2Plugin = fs::path(GLMRT_BUILD_DIR) / "plugins" / "libglmrt-kernels-avx2.so";

#define SKIP_UNLESS_AVX2_RUNS()                                                             \
  do {                                                                                      \
    const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(kAvx2Plugin);       \
    if (!info.supported) GTEST_SKIP() << "kernels-avx2 does not run here: " << info.reason; \
  } while (false)

PluginHandle<plugin::Kernels> avx2_kernels(const PluginHost& host, HostServices& services,
                                           const char* activations) {
  return host.create_kernels(PluginChoice{kAvx2Plugin.string(), {{"activations", activations}}, {}},
                             services);
}

TEST(Avx2ResidualActivations, PassTheConformanceChecksOnEveryGgmlType) {
  SKIP_UNLESS_AVX2_RUNS();
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> kernels = avx2_kernels(host, services, "int8x2");
  int ggml_formats = 0;
  for (const WeightFormatSpec& format : conformance_formats()) {
    if (!plugin::is_ggml_blocks(format.element_type)) continue;
    ++ggml_formats;
    // Two shapes per format (the per-plugin suite runs the rest on int8):
    // exact activations hold the blocks' indexing to float rounding, the
    // Gaussian ones the residual's error to the int8 bound.
    for (const ActivationKind kind : {ActivationKind::kExactInt8, ActivationKind::kGaussian}) {
      const MatmulCase c{format, 7, 37, format.fit_inputs(700), kind, false, 3};
      const CheckResult result = check_matmul_case(*kernels, c);
      EXPECT_NE(result.outcome, Outcome::kFail) << result.name << ": " << result.detail;
    }
    // How passes add up into a row does not depend on the type: three do.
    const uint32_t type = plugin::ggml_type_of(format.element_type);
    if (type != GLMRT_GGML_Q8_0 && type != GLMRT_GGML_Q2_K && type != GLMRT_GGML_IQ2_XXS) continue;
    const CheckResult invariance = check_batch_invariance(*kernels, format);
    EXPECT_NE(invariance.outcome, Outcome::kFail) << invariance.name << ": " << invariance.detail;
  }
  EXPECT_GT(ggml_formats, 0);
  const int minor = host.inspect(kAvx2Plugin).abi_minor;
  for (const CheckResult& result :
       {check_grouped_matmul(*kernels, minor), check_grouped_matmul_side_by_side(*kernels, minor)})
    EXPECT_NE(result.outcome, Outcome::kFail) << result.name << ": " << result.detail;
}

/// Q8_0 rows (an f16 scale of 1/64, then 32 int8 codes per block) of random codes.
std::vector<uint8_t> q8_0_rows(int64_t rows, int64_t cols, std::mt19937& rng) {
  constexpr int64_t kBlockBytes = 34;
  constexpr uint16_t kScaleOneOver64 = 0x2400;  // f16 of 2^-6
  std::vector<uint8_t> data(static_cast<size_t>(rows * cols / 32 * kBlockBytes));
  std::uniform_int_distribution<int> code(-127, 127);
  for (size_t at = 0; at < data.size(); at += kBlockBytes) {
    std::memcpy(&data[at], &kScaleOneOver64, 2);
    for (int j = 0; j < 32; ++j) data[at + 2 + j] = static_cast<uint8_t>(code(rng));
  }
  return data;
}

TEST(Avx2ResidualActivations, ComeCloseToF32ActivationsWherePlainInt8DoesNot) {
  SKIP_UNLESS_AVX2_RUNS();
  constexpr int64_t S = 3, O = 64, I = 512;
  std::mt19937 rng(7);
  const std::vector<uint8_t> blocks = q8_0_rows(O, I, rng);
  std::normal_distribution<float> normal;
  std::vector<float> x(S * I);
  for (float& v : x) v = normal(rng);
  glmrt_weight_view w{};
  w.format = WeightFormatSpec{plugin::ggml_element_type(GLMRT_GGML_Q8_0), 0}.to_format(1);
  w.data = blocks.data();
  w.rows = O;
  w.cols = I;
  w.row_stride_bytes = I / 32 * 34;

  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 1);
  const auto outputs = [&](const char* activations) {
    PluginHandle<plugin::Kernels> kernels = avx2_kernels(host, services, activations);
    std::vector<float> y(S * O);
    EXPECT_EQ(kernels->matmul(x.data(), S, w, y.data()), GLMRT_OK) << kernels->last_error();
    return y;
  };
  const std::vector<float> exact = outputs("f32"), int8 = outputs("int8"),
                           residual = outputs("int8x2");
  const auto max_error = [&](const std::vector<float>& y) {
    double worst = 0;
    for (size_t i = 0; i < y.size(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(y[i]) - exact[i]));
    return worst;
  };
  // int8 alone is off by up to half a step per input; the residual pass
  // takes that about 250 times down, to near the f32 rounding.
  EXPECT_GT(max_error(int8), 1e-3);
  EXPECT_LT(max_error(residual) * 50, max_error(int8))
      << "int8 " << max_error(int8) << ", int8x2 " << max_error(residual);
}

}  // namespace
}  // namespace glmrt::conformance
