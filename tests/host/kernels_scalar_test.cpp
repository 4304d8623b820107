// kernels-scalar against a double-precision reference computed here from the
// same quantized integers and scales, for every format, per-row and
// per-group scales, odd shapes and padded row strides.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace glmrt {
namespace {

const std::filesystem::path kRealPlugins = std::filesystem::path(GLMRT_BUILD_DIR) / "plugins";
constexpr int64_t kStridePadding = 8;  // bytes after each row, so the stride is exercised

/// W[O, I] in one format, plus the exact values it stands for.
struct EncodedWeights {
  glmrt_weight_format format{};
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
  std::vector<double> values;  // dequantized W, row-major
  int64_t row_stride = 0;

  glmrt_weight_view view(int64_t O, int64_t I) const {
    return {format, bytes.data(), scales.empty() ? nullptr : scales.data(), O, I, row_stride};
  }
};

int64_t row_bytes(uint32_t type, int64_t I) {
  switch (type) {
    case GLMRT_F32:
      return 4 * I;
    case GLMRT_BF16:
      return 2 * I;
    case GLMRT_I8:
      return I;
    case GLMRT_I4:
      return (I + 1) / 2;
    case GLMRT_I3:  // blocks of 128: 32 bytes of low bits, 16 of high bits
      return I / 128 * 48 + (I % 128 ? (I % 128 + 3) / 4 + (I % 128 + 7) / 8 : 0);
    default:
      return (I + 3) / 4;
  }
}

/// Symmetric quantization of `w` per row or per group, packed exactly as
/// weight_format.h documents (int4: element 2k low nibble, stored v + 8;
/// int2: element 4k+j at bits 2j, stored v + 2).
EncodedWeights encode(const std::vector<float>& w, int64_t O, int64_t I, uint32_t type,
                      uint32_t group_size) {
  EncodedWeights e;
  e.format = {sizeof(glmrt_weight_format), type, group_size, 0, 1};
  e.row_stride = row_bytes(type, I) + kStridePadding;
  e.bytes.assign(static_cast<size_t>(O * e.row_stride), 0xA5);  // padding is garbage
  e.values.resize(static_cast<size_t>(O * I));
  const int qmax = type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : type == GLMRT_I3 ? 3 : 1;
  const int qmin = -qmax - 1;
  const int64_t group = group_size > 0 ? group_size : I;
  const int64_t n_groups = (I + group - 1) / group;
  for (int64_t o = 0; o < O; ++o) {
    uint8_t* row = e.bytes.data() + o * e.row_stride;
    const float* src = w.data() + o * I;
    double* dst = e.values.data() + o * I;
    if (type == GLMRT_F32) {
      std::memcpy(row, src, static_cast<size_t>(I) * 4);
      for (int64_t i = 0; i < I; ++i) dst[i] = src[i];
      continue;
    }
    if (type == GLMRT_BF16) {
      for (int64_t i = 0; i < I; ++i) {
        const uint16_t half = static_cast<uint16_t>(std::bit_cast<uint32_t>(src[i]) >> 16);
        std::memcpy(row + 2 * i, &half, 2);
        dst[i] = std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
      }
      continue;
    }
    for (int64_t g = 0; g < n_groups; ++g) {
      const int64_t begin = g * group;
      const int64_t end = std::min(I, begin + group);
      float amax = 0;
      for (int64_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(src[i]));
      const float scale = std::max(amax / static_cast<float>(qmax), 1e-8f);
      e.scales.push_back(scale);
      for (int64_t i = begin; i < end; ++i) {
        const int q = std::clamp(static_cast<int>(std::lrint(src[i] / scale)), qmin, qmax);
        dst[i] = static_cast<double>(q) * scale;
        if (type == GLMRT_I8) {
          row[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
        } else if (type == GLMRT_I4) {
          row[i / 2] = static_cast<uint8_t>((i % 2 == 0) ? (row[i / 2] & 0xF0) | (q + 8)
                                                         : (row[i / 2] & 0x0F) | ((q + 8) << 4));
        } else if (type == GLMRT_I3) {
          // Written bit by bit from the layout weight_format.h documents, not
          // with its int3_store_code, so a slip there shows here.
          const int64_t block = i / 128, e = i % 128;
          const int64_t n = std::min<int64_t>(128, I - block * 128);
          uint8_t* base = row + block * 48;
          const int u = q + 4;
          const int low_shift = 2 * static_cast<int>(e % 4);
          base[e / 4] =
              static_cast<uint8_t>((base[e / 4] & ~(3 << low_shift)) | ((u & 3) << low_shift));
          uint8_t& high = base[(n + 3) / 4 + e / 8];
          high = static_cast<uint8_t>((high & ~(1 << (e % 8))) | ((u >> 2) << (e % 8)));
        } else {
          const int shift = 2 * static_cast<int>(i % 4);
          row[i / 4] = static_cast<uint8_t>((row[i / 4] & ~(3 << shift)) | ((q + 2) << shift));
        }
      }
    }
  }
  return e;
}

class KernelsScalarTest : public ::testing::Test {
 protected:
  PluginHandle<plugin::Kernels> make(int threads) {
    services_.emplace_back(std::make_unique<HostServices>(budget_, threads));
    return PluginHost(std::vector<std::filesystem::path>{kRealPlugins})
        .create_kernels(PluginChoice{"kernels-scalar", {}, {}}, *services_.back());
  }

  MemoryBudget budget_;
  std::vector<std::unique_ptr<HostServices>> services_;
};

struct Case {
  uint32_t type;
  uint32_t group_size;
};

TEST_F(KernelsScalarTest, MatchesDoubleReferenceForEveryFormatAndShape) {
  auto kernels = make(3);
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const Case cases[] = {{GLMRT_F32, 0}, {GLMRT_BF16, 0}, {GLMRT_I8, 0},  {GLMRT_I8, 4},
                        {GLMRT_I8, 5},  {GLMRT_I4, 0},   {GLMRT_I4, 3},  {GLMRT_I4, 8},
                        {GLMRT_I2, 0},  {GLMRT_I2, 5},   {GLMRT_I2, 32}, {GLMRT_I3, 0},
                        {GLMRT_I3, 8},  {GLMRT_I3, 64}};
  for (const Case& c : cases) {
    for (int64_t I : {1, 2, 7, 33, 130, 300}) {
      for (int64_t O : {1, 5, 17}) {
        std::vector<float> w(static_cast<size_t>(O * I));
        for (float& v : w) v = normal(rng);
        const EncodedWeights e = encode(w, O, I, c.type, c.group_size);
        ASSERT_TRUE(kernels->supports(e.format));
        for (int64_t S : {1, 3, 7}) {
          std::vector<float> x(static_cast<size_t>(S * I));
          for (float& v : x) v = normal(rng);
          std::vector<float> y(static_cast<size_t>(S * O), std::nanf(""));
          ASSERT_EQ(kernels->matmul(x.data(), S, e.view(O, I), y.data()), GLMRT_OK)
              << kernels->last_error();
          for (int64_t s = 0; s < S; ++s) {
            for (int64_t o = 0; o < O; ++o) {
              double expected = 0, magnitude = 0;
              for (int64_t i = 0; i < I; ++i) {
                const double term = static_cast<double>(x[s * I + i]) * e.values[o * I + i];
                expected += term;
                magnitude += std::fabs(term);
              }
              // f32 output rounding plus scales stored in f32: a few ulp of the terms.
              EXPECT_NEAR(y[s * O + o], expected, 1e-6 * magnitude + 1e-30)
                  << "type " << c.type << " group " << c.group_size << " I " << I << " O " << O
                  << " S " << S << " s " << s << " o " << o;
            }
          }
        }
      }
    }
  }
}

TEST_F(KernelsScalarTest, LongF32RowsStayWithinOneMillionthRelative) {
  auto kernels = make(2);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);  // no cancellation
  const int64_t I = 8192, O = 4, S = 2;
  std::vector<float> w(O * I), x(S * I), y(S * O);
  for (float& v : w) v = uniform(rng);
  for (float& v : x) v = uniform(rng);
  const EncodedWeights e = encode(w, O, I, GLMRT_F32, 0);
  ASSERT_EQ(kernels->matmul(x.data(), S, e.view(O, I), y.data()), GLMRT_OK);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t o = 0; o < O; ++o) {
      double expected = 0;
      for (int64_t i = 0; i < I; ++i) expected += double(x[s * I + i]) * w[o * I + i];
      EXPECT_NEAR(y[s * O + o] / expected, 1.0, 1e-6);
    }
  }
}

TEST_F(KernelsScalarTest, ThreadCountDoesNotChangeResults) {
  auto one = make(1);
  auto four = make(4);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t I = 100, O = 37, S = 3;
  std::vector<float> w(O * I), x(S * I), y1(S * O), y4(S * O);
  for (float& v : w) v = normal(rng);
  for (float& v : x) v = normal(rng);
  const EncodedWeights e = encode(w, O, I, GLMRT_I4, 16);
  ASSERT_EQ(one->matmul(x.data(), S, e.view(O, I), y1.data()), GLMRT_OK);
  ASSERT_EQ(four->matmul(x.data(), S, e.view(O, I), y4.data()), GLMRT_OK);
  EXPECT_EQ(y1, y4);
}

TEST_F(KernelsScalarTest, ScratchIsChargedToTheBudgetAndReleased) {
  {
    auto kernels = make(2);
    // A small call runs on one thread: one decoded row of scratch.
    const EncodedWeights e = encode(std::vector<float>(64, 1.0f), 2, 32, GLMRT_I8, 0);
    std::vector<float> x(32, 1.0f), y(2);
    ASSERT_EQ(kernels->matmul(x.data(), 1, e.view(2, 32), y.data()), GLMRT_OK);
    EXPECT_GE(budget_.by_category().at("plugin:alloc"), 32u * sizeof(float));
    EXPECT_LT(budget_.by_category().at("plugin:alloc"), 2u * 32u * sizeof(float));
    // A call of 2^20 multiply-adds is shared out: a row for each thread.
    constexpr int64_t O = 1024, I = 1024;
    const EncodedWeights big = encode(std::vector<float>(O * I, 0.5f), O, I, GLMRT_I8, 0);
    std::vector<float> xb(I, 1.0f), yb(O), alone(O);
    ASSERT_EQ(kernels->matmul(xb.data(), 1, big.view(O, I), yb.data()), GLMRT_OK);
    EXPECT_GE(budget_.by_category().at("plugin:alloc"), 2u * I * sizeof(float));
    auto one = make(1);
    ASSERT_EQ(one->matmul(xb.data(), 1, big.view(O, I), alone.data()), GLMRT_OK);
    EXPECT_EQ(yb, alone);
  }
  EXPECT_EQ(budget_.by_category().at("plugin:alloc"), 0u);
}

TEST_F(KernelsScalarTest, RejectsWhatItCannotDoWithAMessage) {
  auto kernels = make(1);
  std::vector<float> x(8, 1.0f), y(2);
  EncodedWeights e = encode(std::vector<float>(16, 1.0f), 2, 8, GLMRT_I4, 0);

  glmrt_weight_view unknown_type = e.view(2, 8);
  unknown_type.format.element_type = 99;
  EXPECT_FALSE(kernels->supports(unknown_type.format));
  EXPECT_EQ(kernels->matmul(x.data(), 1, unknown_type, y.data()), GLMRT_ERR_UNSUPPORTED);
  EXPECT_THAT(kernels->last_error(), ::testing::HasSubstr("element type 99"));

  glmrt_weight_view other_packing = e.view(2, 8);
  other_packing.format.packing = 1;
  EXPECT_FALSE(kernels->supports(other_packing.format));
  EXPECT_EQ(kernels->matmul(x.data(), 1, other_packing, y.data()), GLMRT_ERR_UNSUPPORTED);
  EXPECT_THAT(kernels->last_error(), ::testing::HasSubstr("packing 1"));

  glmrt_weight_view no_scales = e.view(2, 8);
  no_scales.scales = nullptr;
  EXPECT_EQ(kernels->matmul(x.data(), 1, no_scales, y.data()), GLMRT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(kernels->last_error(), ::testing::HasSubstr("scales"));

  glmrt_weight_view short_stride = e.view(2, 8);
  short_stride.row_stride_bytes = 3;
  EXPECT_EQ(kernels->matmul(x.data(), 1, short_stride, y.data()), GLMRT_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(kernels->last_error(), ::testing::HasSubstr("row_stride_bytes 3"));

  glmrt_weight_format grouped_f32{sizeof(glmrt_weight_format), GLMRT_F32, 32, 0, 4};
  EXPECT_FALSE(kernels->supports(grouped_f32));
}

TEST_F(KernelsScalarTest, RefusesEverySetting) {
  MemoryBudget budget;
  HostServices services(budget, 1);
  try {
    PluginHost(std::vector<std::filesystem::path>{kRealPlugins})
        .create_kernels(PluginChoice{"kernels-scalar", {{"vector_width", "8"}}, {}}, services);
    FAIL() << "a setting was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("`vector_width`"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("libglmrt-kernels-scalar.so"));
  }
}

}  // namespace
}  // namespace glmrt
