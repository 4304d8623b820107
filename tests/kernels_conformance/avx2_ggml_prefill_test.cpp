// kernels-avx2 at prefill sizes on ggml blocks: enough activation rows and
// weight rows that a product is cut into several cache blocks (panels of
// activation rows, bands of weight rows) and split among threads, and
// products of the same x that quantize it once. Every row must be the bits
// it has alone (S = 1), the property speculative decoding relies on.
#include <glmrt/conformance/matmul_case.h>
#include <glmrt/host/plugin_host.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace glmrt::conformance::avx2_prefill {
namespace {

namespace fs = std::filesystem;

const fs::path kAvx2Plugin = fs::path(GLMRT_BUILD_DIR) / "plugins" / "libglmrt-kernels-avx2.so";

// 4096 inputs: a panel of activation rows is 32 rows, a band of weight rows
// 28 (Q4_0) or 15 (Q8_0); S = 41 is two panels at int8 and three at int8x2,
// the last ones partial (wide, pair and single-row kernels all run).
constexpr int64_t kS = 41, kO = 45, kI = 4096;
/// f16 of 2^-7, 2^-6, 1.5 x 2^-6 and 2^-5: finite scales that differ from
/// block to block and row to row.
constexpr uint16_t kScales[] = {0x2000, 0x2400, 0x2600, 0x2800};

/// Rows of ggml blocks of `block_bytes`: random bytes (codes, and the
/// K-quants' packed scales and mins) with the f16 fields at `f16_offsets`
/// (d, dmin) each one of kScales.
std::vector<uint8_t> random_rows(int64_t block_bytes, int64_t block_values,
                                 const std::vector<int>& f16_offsets, std::mt19937& rng) {
  std::vector<uint8_t> data(static_cast<size_t>(kO * kI / block_values * block_bytes));
  std::uniform_int_distribution<int> byte(0, 255), scale(0, 3);
  for (uint8_t& b : data) b = static_cast<uint8_t>(byte(rng));
  for (size_t at = 0; at < data.size(); at += static_cast<size_t>(block_bytes))
    for (const int offset : f16_offsets) std::memcpy(&data[at + offset], &kScales[scale(rng)], 2);
  return data;
}

struct GgmlWeights {
  std::vector<uint8_t> data;
  glmrt_weight_view view{};
};

/// A ggml type, its block size and where its f16 fields are.
struct GgmlType {
  uint32_t type;
  int64_t block_bytes, block_values;
  std::vector<int> f16_offsets;
};
const GgmlType kQ4_0{GLMRT_GGML_Q4_0, 18, 32, {0}};
const GgmlType kQ8_0{GLMRT_GGML_Q8_0, 34, 32, {0}};

GgmlWeights ggml_weights(const GgmlType& t, std::mt19937& rng) {
  GgmlWeights w;
  w.data = random_rows(t.block_bytes, t.block_values, t.f16_offsets, rng);
  w.view.format = WeightFormatSpec{plugin::ggml_element_type(t.type), 0}.to_format(1);
  w.view.data = w.data.data();
  w.view.rows = kO;
  w.view.cols = kI;
  w.view.row_stride_bytes = kI / t.block_values * t.block_bytes;
  return w;
}

/// kernels-avx2's `activations` and `avx512` settings: with `auto` on a CPU
/// with AVX-512 VNNI the lane kernels pack 16 rows per zmm, with `off` 8 per
/// ymm (ggml_lanes.h); both must give every row its bits alone.
struct PrefillCase {
  const char* activations;
  const char* avx512;
};

class Avx2GgmlPrefill : public testing::TestWithParam<PrefillCase> {
 protected:
  void SetUp() override {
    const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(kAvx2Plugin);
    if (!info.supported) GTEST_SKIP() << "kernels-avx2 does not run here: " << info.reason;
    std::normal_distribution<float> normal;
    for (float& v : x_) v = normal(rng_);
  }

  PluginHandle<plugin::Kernels> kernels(HostServices& services) const {
    return host_.create_kernels(
        PluginChoice{kAvx2Plugin.string(),
                     {{"activations", GetParam().activations}, {"avx512", GetParam().avx512}},
                     {}},
        services);
  }

  std::mt19937 rng_{35};
  std::vector<float> x_ = std::vector<float>(kS * kI);
  const PluginHost host_{std::vector<fs::path>{}};
};

TEST_P(Avx2GgmlPrefill, EveryRowIsItsBitsAloneAcrossCacheBlocksAndThreads) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> k = kernels(services);
  // These types pack 8 weight rows into lanes on CPUs with AVX-VNNI, 16 with
  // AVX-512 VNNI (ggml_lanes.h): 45 rows over 2 threads are, per thread, a
  // pack of 16, then one of 8 or none, then single rows.
  for (const GgmlType& t :
       {kQ4_0, kQ8_0, GgmlType{GLMRT_GGML_Q4_K, 144, 256, {0, 2}},
        GgmlType{GLMRT_GGML_Q2_K, 84, 256, {80, 82}}, GgmlType{GLMRT_GGML_Q6_K, 210, 256, {208}}}) {
    const uint32_t type = t.type;
    const GgmlWeights w = ggml_weights(t, rng_);
    std::vector<float> together(kS * kO), alone(kO);
    ASSERT_EQ(k->matmul(x_.data(), kS, w.view, together.data()), GLMRT_OK) << k->last_error();
    for (int64_t s = 0; s < kS; ++s) {
      ASSERT_EQ(k->matmul(x_.data() + s * kI, 1, w.view, alone.data()), GLMRT_OK);
      for (int64_t o = 0; o < kO; ++o)
        ASSERT_EQ(std::memcmp(&together[s * kO + o], &alone[o], sizeof(float)), 0)
            << "type " << type << ", y[" << s << ", " << o << "] is " << together[s * kO + o]
            << " in a call of " << kS << " rows but " << alone[o] << " alone";
    }
  }
}

TEST_P(Avx2GgmlPrefill, ProductsOfOneXQuantizeItOnceWithTheSameResults) {
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> k = kernels(services);
  const GgmlWeights gate = ggml_weights(kQ4_0, rng_);
  const GgmlWeights up = ggml_weights(kQ8_0, rng_);
  std::vector<float> gate_alone(kS * kO), up_alone(kS * kO);
  ASSERT_EQ(k->matmul(x_.data(), kS, gate.view, gate_alone.data()), GLMRT_OK);
  ASSERT_EQ(k->matmul(x_.data(), kS, up.view, up_alone.data()), GLMRT_OK);
  // Side by side in one output buffer ([S, 2 O]), as gate and up are.
  std::vector<float> both(kS * 2 * kO);
  glmrt_matmul_product products[2]{};
  for (int j = 0; j < 2; ++j) {
    products[j].struct_size = sizeof(glmrt_matmul_product);
    products[j].x = x_.data();
    products[j].S = kS;
    products[j].w = j == 0 ? gate.view : up.view;
    products[j].y = both.data() + j * kO;
    products[j].y_stride = 2 * kO;
  }
  ASSERT_EQ(k->grouped_matmul(products, 2), GLMRT_OK) << k->last_error();
  for (int64_t s = 0; s < kS; ++s)
    for (int64_t o = 0; o < kO; ++o) {
      ASSERT_EQ(std::memcmp(&both[s * 2 * kO + o], &gate_alone[s * kO + o], sizeof(float)), 0)
          << "gate y[" << s << ", " << o << "]";
      ASSERT_EQ(std::memcmp(&both[s * 2 * kO + kO + o], &up_alone[s * kO + o], sizeof(float)), 0)
          << "up y[" << s << ", " << o << "]";
    }
}

// Below the rows that pay for packing lanes, a CPU with AVX-512 VNNI meets
// two weight rows per zmm (ggml_row_pairs.h): every row must be the bits of
// the AVX2 row kernel (`avx512: off`), at each width of the activation rows
// (1, 2 and 4: S = 1-7 rows, doubled by int8x2's passes) and for the odd
// weight row left over (45 rows).
TEST(Avx2GgmlRowPairs, GiveTheRowKernelsBitsAtEveryWidth) {
  const PluginHost host{std::vector<fs::path>{}};
  const PluginInfo info = host.inspect(kAvx2Plugin);
  if (!info.supported) GTEST_SKIP() << "kernels-avx2 does not run here: " << info.reason;
  std::mt19937 rng{36};
  std::normal_distribution<float> normal;
  std::vector<float> x(7 * kI);
  for (float& v : x) v = normal(rng);
  MemoryBudget budget;
  HostServices services(budget, 2);
  for (const char* activations : {"int8", "int8x2"}) {
    const auto kernels = [&](const char* avx512) {
      return host.create_kernels(
          PluginChoice{
              kAvx2Plugin.string(), {{"activations", activations}, {"avx512", avx512}}, {}},
          services);
    };
    PluginHandle<plugin::Kernels> wide = kernels("auto"), narrow = kernels("off");
    for (const GgmlType& t :
         {GgmlType{GLMRT_GGML_Q4_K, 144, 256, {0, 2}}, GgmlType{GLMRT_GGML_Q2_K, 84, 256, {80, 82}},
          GgmlType{GLMRT_GGML_IQ4_XS, 136, 256, {0}}}) {
      const GgmlWeights w = ggml_weights(t, rng);
      for (const int64_t S : {1, 2, 3, 4, 5, 7}) {
        std::vector<float> a(S * kO), b(S * kO);
        ASSERT_EQ(wide->matmul(x.data(), S, w.view, a.data()), GLMRT_OK) << wide->last_error();
        ASSERT_EQ(narrow->matmul(x.data(), S, w.view, b.data()), GLMRT_OK);
        for (int64_t i = 0; i < S * kO; ++i)
          ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(float)), 0)
              << "type " << t.type << ", " << activations << ", S = " << S << ": y[" << i / kO
              << ", " << i % kO << "] is " << a[i] << " with avx512: auto but " << b[i]
              << " with off";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Settings, Avx2GgmlPrefill,
                         testing::Values(PrefillCase{"int8", "auto"}, PrefillCase{"int8x2", "auto"},
                                         PrefillCase{"int8", "off"}, PrefillCase{"int8x2", "off"}),
                         [](const testing::TestParamInfo<PrefillCase>& info) {
                           return std::string(info.param.activations) + "_avx512_" +
                                  info.param.avx512;
                         });

}  // namespace
}  // namespace glmrt::conformance::avx2_prefill
