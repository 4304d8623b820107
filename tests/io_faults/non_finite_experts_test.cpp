// Non-finite expert weights: the scan finds every NaN and infinity in each
// float dtype, and an expert holding one fails when it is read, naming the
// tensor, layer, expert, matrix and position, whatever precision the profile
// converts it to.
#include <glmrt/base/error.h>
#include <glmrt/model_files/non_finite.h>
#include <glmrt/generate/session.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "checkpoint_generator.h"
#include "fault_profiles.h"
#include "safetensors_writer.h"

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

struct FloatFormat {
  DType dtype;
  size_t bytes;
  uint64_t exponent, mantissa, sign;
};

const FloatFormat kFormats[] = {
    {DType::F32, 4, 0x7F800000u, 0x007FFFFFu, 0x80000000u},
    {DType::BF16, 2, 0x7F80, 0x007F, 0x8000},
    {DType::F16, 2, 0x7C00, 0x03FF, 0x8000},
    {DType::F64, 8, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull, 0x8000000000000000ull},
};

uint64_t top_bit(uint64_t field) {
  return field & ~(field >> 1);
}
uint64_t low_bit(uint64_t field) {
  return field & (~field + 1);
}

void store(std::vector<std::byte>& bytes, const FloatFormat& f, size_t index, uint64_t bits) {
  std::memcpy(bytes.data() + index * f.bytes, &bits, f.bytes);  // little-endian host
}

TEST(FindNonFinite, FindsTheFirstNanOrInfinityAtAnyPosition) {
  constexpr size_t kCount = 9000;  // spans several scan blocks, with a partial last one
  std::mt19937_64 rng(3);
  for (const FloatFormat& f : kFormats) {
    SCOPED_TRACE(std::string(dtype_name(f.dtype)));
    std::vector<std::byte> bytes(kCount * f.bytes);
    for (size_t i = 0; i < kCount; ++i) {
      // Random finite values, plus the largest finite, zeros and subnormals.
      uint64_t bits = rng() & (f.exponent | f.mantissa | f.sign);
      if ((bits & f.exponent) == f.exponent) bits &= ~top_bit(f.exponent);
      if (i % 97 == 0) bits = (f.exponent - low_bit(f.exponent)) | f.mantissa;  // largest finite
      if (i % 89 == 0) bits = f.sign;                                           // -0
      if (i % 83 == 0) bits = 1;  // smallest subnormal
      store(bytes, f, i, bits);
    }
    ASSERT_EQ(find_non_finite(f.dtype, bytes), -1);
    const uint64_t nan = f.exponent | top_bit(f.mantissa), inf = f.exponent,
                   minus_inf = f.exponent | f.sign;
    for (size_t at : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, kCount - 1}) {
      for (auto [bits, kind] : {std::pair{nan, "NaN"}, {inf, "+Inf"}, {minus_inf, "-Inf"}}) {
        std::vector<std::byte> bad = bytes;
        store(bad, f, at, bits);
        if (at + 7 < kCount) store(bad, f, at + 7, nan);  // a later one does not matter
        EXPECT_EQ(find_non_finite(f.dtype, bad), static_cast<int64_t>(at)) << kind << " at " << at;
        EXPECT_STREQ(non_finite_kind(f.dtype, bad, static_cast<int64_t>(at)), kind);
      }
    }
  }
  EXPECT_THROW(find_non_finite(DType::I32, {}), Error);
}

TEST(FindNonFinite, CheckedDecodeMatchesDecodeAndStopsAtTheFirstNonFinite) {
  std::vector<float> values(50000);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal;
  for (float& v : values) v = normal(rng);
  std::vector<std::byte> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  std::vector<float> decoded(values.size());
  ASSERT_EQ(decode_finite_to_f32(DType::F32, bytes, decoded), -1);
  EXPECT_EQ(decoded, values);
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data() + 4 * 40000, &inf, 4);
  EXPECT_EQ(decode_finite_to_f32(DType::F32, bytes, decoded), 40000);
  EXPECT_THROW(decode_finite_to_f32(DType::F32, bytes, std::span(decoded).first(10)), Error);
}

struct Corruption {
  test::StoredDType stored;
  std::string precision;  // the profile's precision.experts
};

void PrintTo(const Corruption& c, std::ostream* os) {
  *os << test::stored_dtype_name(c.stored) << " experts as " << c.precision;
}

class NonFiniteExpertTest : public ::testing::TestWithParam<Corruption> {
 protected:
  static constexpr const char* kNanTensor = "model.layers.2.mlp.experts.5.up_proj.weight";
  static constexpr const char* kInfTensor = "model.layers.3.mlp.experts.6.down_proj.weight";

  static constexpr const char* kNanScale = "model.layers.2.mlp.experts.8.gate_proj.weight.qs";

  /// Makes `name` (rows x cols) a pre-quantized int8 tensor: U8 bytes plus
  /// F32 scales in `name`.qs right after it, scale `nan_row` NaN (-1: none).
  static void prequantize(test::TensorList& tensors, const std::string& name, int64_t nan_row) {
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const test::HostTensor& t) { return t.name == name; });
    ASSERT_NE(it, tensors.end());
    std::mt19937 rng(5);
    for (float& v : it->values) v = static_cast<float>(rng() % 256);
    it->dtype = test::StoredDType::u8;
    test::HostTensor scales{name + ".qs", {it->shape[0]}, std::vector<float>(it->shape[0], 0.01f)};
    if (nan_row >= 0) scales.values.at(nan_row) = std::nanf("");
    tensors.insert(it + 1, std::move(scales));
  }

  /// glm_tiny's config, generated weights; one NaN in layer 2 expert 5's up
  /// projection (row 3, column 7) and -Inf in layer 3 expert 6's down
  /// projection (row 10, column 31); layer 2 experts 8 and 9 pre-quantized
  /// (int8 gate projection), expert 8 with a NaN scale for row 4. `favour`
  /// makes layer 2's router pick expert 5 for every token (its correction
  /// bias only steers the choice).
  std::unique_ptr<Engine> open_corrupt(bool favour = false) {
    nlohmann::json config;
    std::ifstream(test::kTinyModel / "config.json") >> config;
    test::TensorList tensors = test::make_checkpoint_tensors({config, 11, GetParam().stored});
    const int64_t D = config["hidden_size"], I = config["moe_intermediate_size"];
    test::find_tensor(tensors, kNanTensor)->values.at(3 * D + 7) = std::nanf("");
    test::find_tensor(tensors, kInfTensor)->values.at(10 * I + 31) =
        -std::numeric_limits<float>::infinity();
    prequantize(tensors, "model.layers.2.mlp.experts.8.gate_proj.weight", 4);
    prequantize(tensors, "model.layers.2.mlp.experts.9.gate_proj.weight", -1);
    if (favour)
      test::find_tensor(tensors, "model.layers.2.mlp.gate.e_score_correction_bias")->values.at(5) =
          100.f;
    test::write_checkpoint(scratch_.path() / "model", config, tensors, 2);
    return test::open_engine(scratch_.path(), "corrupt", test::clean_spec(GetParam().precision),
                             scratch_.path() / "model");
  }
  std::string error_of(Engine& engine, int layer, std::vector<int32_t> ids) {
    try {
      engine.experts().acquire(layer, ids);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }

  test::ScratchDir scratch_{"glmrt-non-finite-experts"};
};

TEST_P(NonFiniteExpertTest, ReadingTheExpertFailsNamingTensorAndPosition) {
  auto engine = open_corrupt();
  EXPECT_NO_THROW(engine->experts().acquire(2, std::vector<int32_t>{4, 6}));
  EXPECT_THAT(
      error_of(*engine, 2, {4, 5}),
      AllOf(HasSubstr(kNanTensor), HasSubstr("(layer 2, expert 5, up_proj)"),
            HasSubstr("holds NaN at row 3, column 7"), HasSubstr(".safetensors at offset")));
  EXPECT_THAT(error_of(*engine, 3, {6}),
              AllOf(HasSubstr(kInfTensor), HasSubstr("(layer 3, expert 6, down_proj)"),
                    HasSubstr("holds -Inf at row 10, column 31")));
  EXPECT_THAT(error_of(*engine, 2, {8}),
              AllOf(HasSubstr(kNanScale), HasSubstr("(layer 2, expert 8, gate_proj)"),
                    HasSubstr("holds NaN at row 4 (a scale)")));
  EXPECT_EQ(error_of(*engine, 2, {9}), "no error");  // pre-quantized, finite scales
  // Nothing of a failed batch is cached: the same read fails again.
  EXPECT_THAT(error_of(*engine, 2, {5}), HasSubstr(kNanTensor));
  EXPECT_EQ(error_of(*engine, 3, {5, 7}), "no error");
}

TEST_P(NonFiniteExpertTest, AStepRoutedToItStopsWithTheTensorsName) {
  auto engine = open_corrupt(/*favour=*/true);
  Session session(*engine);
  try {
    session.set_context(std::vector<int32_t>{3, 141, 59, 265});
    FAIL() << "a step computed with a NaN expert weight";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(kNanTensor), HasSubstr("NaN")));
  }
  EXPECT_TRUE(session.tokens().empty());
}

INSTANTIATE_TEST_SUITE_P(StoredAndConverted, NonFiniteExpertTest,
                         ::testing::Values(Corruption{test::StoredDType::f32, "f32"},
                                           Corruption{test::StoredDType::f32, "int4"},
                                           Corruption{test::StoredDType::bf16, "int8"},
                                           Corruption{test::StoredDType::f16, "bf16"}),
                         [](const auto& info) {
                           return std::string(test::stored_dtype_name(info.param.stored)) + "_as_" +
                                  info.param.precision;
                         });

}  // namespace
}  // namespace glmrt
