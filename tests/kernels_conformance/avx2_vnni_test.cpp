// kernels-avx2's `vnni` setting: the int8 dots take AVX-VNNI's vpdpbusd
// where the CPU has it (`auto`) or AVX2's maddubs (`off`). Both must give the
// same bits for every ggml type with an int8 kernel and every glmrt int
// format (int8, int4, int3, int2; per row, per group, two-level), at S = 1
// and S > 1, with int8 and int8x2 activations, and the probe must name the
// path that runs.
#include <glmrt/conformance/matmul_case.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/plugin/ggml_types.h>
#include <glmrt/plugin/weight_format.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace glmrt::conformance::avx2_vnni {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

const fs::path kAvx2Plugin = fs::path(GLMRT_BUILD_DIR) / "plugins" / "libglmrt-kernels-avx2.so";

constexpr int64_t kO = 33, kI = 1024;
constexpr uint16_t kScaleOneOver64 = 0x2400;  // f16 of 2^-6

struct GgmlType {
  uint32_t type;
  std::vector<int> f16_offsets;  // the block's f16 fields (d, dmin), set finite
};

/// Every ggml type with an int8-activation kernel in kernels-avx2.
const std::vector<GgmlType> kTypes = {
    {GLMRT_GGML_Q8_0, {0}},    {GLMRT_GGML_Q4_0, {0}},   {GLMRT_GGML_Q2_K, {80, 82}},
    {GLMRT_GGML_Q4_K, {0, 2}}, {GLMRT_GGML_Q6_K, {208}}, {GLMRT_GGML_IQ2_XXS, {0}},
    {GLMRT_GGML_IQ4_XS, {0}},
};

/// kO rows of random blocks (every code byte, -128 included) with finite scales.
std::vector<uint8_t> random_blocks(const GgmlType& t, std::mt19937& rng) {
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(t.type);
  const int64_t block_bytes = traits.block_bytes;
  std::vector<uint8_t> data(static_cast<size_t>(kO * kI / traits.block_values * block_bytes));
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& b : data) b = static_cast<uint8_t>(byte(rng));
  for (size_t at = 0; at < data.size(); at += static_cast<size_t>(block_bytes))
    for (const int offset : t.f16_offsets) std::memcpy(&data[at + offset], &kScaleOneOver64, 2);
  return data;
}

/// Gaussian rows, then rows that quantize to +-127 in every input (the
/// largest products maddubs pairs), then one with a NaN (its outputs NaN).
std::vector<float> activations(int64_t S, std::mt19937& rng, int64_t I = kI) {
  std::vector<float> x(static_cast<size_t>(S * I));
  std::normal_distribution<float> normal;
  for (float& v : x) v = normal(rng);
  if (S > 1)
    for (int64_t i = 0; i < I; ++i) x[I + i] = (i / 3) % 2 == 0 ? 1.0f : -1.0f;
  if (S > 2) x[2 * I + 5] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

bool has_avx_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avxvnni");
}

class Avx2Vnni : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const PluginInfo info = host_.inspect(kAvx2Plugin);
    if (!info.supported) GTEST_SKIP() << "kernels-avx2 does not run here: " << info.reason;
  }

  PluginHandle<plugin::Kernels> kernels(HostServices& services, const char* vnni) const {
    return host_.create_kernels(
        PluginChoice{kAvx2Plugin.string(), {{"activations", GetParam()}, {"vnni", vnni}}, {}},
        services);
  }

  const PluginHost host_{std::vector<fs::path>{}};
};

TEST_P(Avx2Vnni, GivesTheBitsOfTheMaddubsPathForEveryGgmlType) {
  if (!has_avx_vnni()) std::cout << "note: no AVX-VNNI here, both settings run maddubs\n";
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> vnni = kernels(services, "auto");
  PluginHandle<plugin::Kernels> maddubs = kernels(services, "off");
  std::mt19937 rng(35);
  for (const GgmlType& t : kTypes) {
    const std::vector<uint8_t> data = random_blocks(t, rng);
    const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(t.type);
    glmrt_weight_view w{};
    w.format = WeightFormatSpec{plugin::ggml_element_type(t.type), 0}.to_format(1);
    w.data = data.data();
    w.rows = kO;
    w.cols = kI;
    w.row_stride_bytes = kI / traits.block_values * traits.block_bytes;
    // S = 7 meets the wide, pair and single-row kernels.
    for (const int64_t S : {int64_t{1}, int64_t{7}}) {
      const std::vector<float> x = activations(S, rng);
      std::vector<float> y_vnni(S * kO), y_maddubs(S * kO);
      ASSERT_EQ(vnni->matmul(x.data(), S, w, y_vnni.data()), GLMRT_OK) << vnni->last_error();
      ASSERT_EQ(maddubs->matmul(x.data(), S, w, y_maddubs.data()), GLMRT_OK)
          << maddubs->last_error();
      for (int64_t k = 0; k < S * kO; ++k)
        ASSERT_EQ(std::memcmp(&y_vnni[k], &y_maddubs[k], sizeof(float)), 0)
            << traits.name << " S=" << S << ": y[" << k / kO << ", " << k % kO << "] is "
            << y_vnni[k] << " with vnni: auto but " << y_maddubs[k] << " with vnni: off";
    }
  }
}

/// glmrt's integer formats: per-row scales, per-group (the grouped kernels)
/// and two-level (group scales decoded per tile); every code, -128 included.
const std::vector<WeightFormatSpec> kIntFormats = {
    {GLMRT_I8, 0},  {GLMRT_I4, 0},  {GLMRT_I3, 0},    {GLMRT_I2, 0},    {GLMRT_I8, 64},
    {GLMRT_I4, 64}, {GLMRT_I2, 64}, {GLMRT_I4K, 256}, {GLMRT_I2K, 256},
};

TEST_P(Avx2Vnni, GivesTheBitsOfTheMaddubsPathForEveryIntFormat) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> vnni = kernels(services, "auto");
  PluginHandle<plugin::Kernels> maddubs = kernels(services, "off");
  std::mt19937 rng(36);
  // An odd I: a partial last step in every format (of 32, 64 and 128 values).
  constexpr int64_t kIntI = 999;
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.5f / 64, 1.0f / 64);
  for (const WeightFormatSpec& spec : kIntFormats) {
    glmrt_weight_view w{};
    w.format = spec.to_format(1);
    const int64_t row_bytes = plugin::packed_row_bytes(spec.element_type, kIntI);
    const int64_t groups =
        spec.group_size == 0 ? 1 : (kIntI + spec.group_size - 1) / spec.group_size;
    std::vector<uint8_t> data(static_cast<size_t>(kO * row_bytes));
    for (uint8_t& b : data) b = static_cast<uint8_t>(byte(rng));
    std::vector<float> scales(static_cast<size_t>(kO * groups));
    for (float& v : scales) v = scale(rng);
    w.data = data.data();
    w.scales = scales.data();
    w.rows = kO;
    w.cols = kIntI;
    w.row_stride_bytes = row_bytes;
    // S = 1 (its own tile shape), 4 (one full tile of columns), 19 (four
    // tiles and a remainder of 3).
    for (const int64_t S : {int64_t{1}, int64_t{4}, int64_t{19}}) {
      const std::vector<float> x = activations(S, rng, kIntI);
      std::vector<float> y_vnni(S * kO), y_maddubs(S * kO);
      ASSERT_EQ(vnni->matmul(x.data(), S, w, y_vnni.data()), GLMRT_OK) << vnni->last_error();
      ASSERT_EQ(maddubs->matmul(x.data(), S, w, y_maddubs.data()), GLMRT_OK)
          << maddubs->last_error();
      for (int64_t k = 0; k < S * kO; ++k)
        ASSERT_EQ(std::memcmp(&y_vnni[k], &y_maddubs[k], sizeof(float)), 0)
            << spec.name() << " S=" << S << ": y[" << k / kO << ", " << k % kO << "] is "
            << y_vnni[k] << " with vnni: auto but " << y_maddubs[k] << " with vnni: off";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, Avx2Vnni, testing::Values("int8", "int8x2"));

TEST(Avx2VnniReport, TheProbeNamesThePathAutoTakes) {
  const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(kAvx2Plugin);
  if (!info.supported) GTEST_SKIP() << "kernels-avx2 does not run here: " << info.reason;
  EXPECT_THAT(info.reason,
              HasSubstr(has_avx_vnni() ? "AVX-VNNI vpdpbusd" : "maddubs (no AVX-VNNI)"));
  // Whole: the probe's note is cut at 159 bytes, and every variant of the
  // line ends with a closing parenthesis.
  EXPECT_EQ(info.reason.back(), ')') << info.reason;
}

TEST(Avx2VnniReport, ABadValueNamesTheSettingAndWhatIsAccepted) {
  const PluginHost host(std::vector<fs::path>{});
  if (!host.inspect(kAvx2Plugin).supported) GTEST_SKIP() << "kernels-avx2 does not run here";
  MemoryBudget budget;
  HostServices services(budget, 1);
  for (const auto& [key, value] : {std::pair{"vnni", "on"}, {"avx512", "yes"}}) {
    try {
      host.create_kernels(PluginChoice{kAvx2Plugin.string(), {{key, value}}, {}}, services);
      ADD_FAILURE() << key << ": " << value << " was accepted";
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), HasSubstr(key));
      EXPECT_THAT(e.what(), HasSubstr("auto or off"));
    }
  }
}

}  // namespace
}  // namespace glmrt::conformance::avx2_vnni
