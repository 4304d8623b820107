// ggml's weight blocks decode bit for bit as ggml's reference dequantization
// does: fixtures/gguf_dequant holds, per type, raw blocks (from llama.cpp's
// GGUFs and random bytes) and the floats ggml's to_float gave for them.
#include "ggml/ggml_blocks.h"
#include "ggml/ggml_scalars.h"

#include <glmrt/plugin/ggml_types.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

namespace ggml = glmrt::plugin_support::ggml;
using glmrt::plugin::ggml_type_traits;

namespace {

const std::string kDir = std::string(GLMRT_FIXTURES) + "/gguf_dequant/";

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const nlohmann::json& index_json() {
  static const nlohmann::json index = nlohmann::json::parse(std::ifstream(kDir + "index.json"));
  return index;
}

struct TypeCase {
  const char* name;  // as index.json and the file names spell it
  uint32_t type;
};

// Every type issue 35 names: those of published GLM-5 / DeepSeek / Kimi GGUFs.
const TypeCase kTypes[] = {
    {"F32", GLMRT_GGML_F32},         {"F16", GLMRT_GGML_F16},       {"BF16", GLMRT_GGML_BF16},
    {"Q8_0", GLMRT_GGML_Q8_0},       {"Q4_0", GLMRT_GGML_Q4_0},     {"Q4_1", GLMRT_GGML_Q4_1},
    {"Q5_0", GLMRT_GGML_Q5_0},       {"Q5_1", GLMRT_GGML_Q5_1},     {"Q2_K", GLMRT_GGML_Q2_K},
    {"Q3_K", GLMRT_GGML_Q3_K},       {"Q4_K", GLMRT_GGML_Q4_K},     {"Q5_K", GLMRT_GGML_Q5_K},
    {"Q6_K", GLMRT_GGML_Q6_K},       {"IQ1_S", GLMRT_GGML_IQ1_S},   {"IQ1_M", GLMRT_GGML_IQ1_M},
    {"IQ2_XXS", GLMRT_GGML_IQ2_XXS}, {"IQ2_XS", GLMRT_GGML_IQ2_XS}, {"IQ2_S", GLMRT_GGML_IQ2_S},
    {"IQ3_XXS", GLMRT_GGML_IQ3_XXS}, {"IQ3_S", GLMRT_GGML_IQ3_S},   {"IQ4_NL", GLMRT_GGML_IQ4_NL},
    {"IQ4_XS", GLMRT_GGML_IQ4_XS},   {"MXFP4", GLMRT_GGML_MXFP4},
};

void PrintTo(const TypeCase& type_case, std::ostream* os) {
  *os << type_case.name;
}

TEST(GgmlTypes, SdkIdsAndBlockSizesAreThoseOfTheLlamaCppThatMadeTheVectors) {
  // All 28 types of the vectors, those not dequantized here included.
  for (const auto& [name, entry] : index_json().at("types").items()) {
    const auto traits = ggml_type_traits(entry.at("ggml_type").get<uint32_t>());
    ASSERT_NE(traits.name, nullptr) << name;
    EXPECT_EQ(std::string(traits.name), name);
    EXPECT_EQ(traits.block_values, entry.at("block_elems").get<int64_t>()) << name;
    EXPECT_EQ(traits.block_bytes, entry.at("block_bytes").get<int64_t>()) << name;
  }
}

/// Index of the first value whose bits differ, or -1: bits, not values, so
/// that -0.0 and NaN payloads count.
int64_t first_bit_difference(const std::vector<float>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t expected = 0;
    std::memcpy(&expected, want.data() + 4 * i, 4);
    if (std::bit_cast<uint32_t>(got[i]) != expected) return static_cast<int64_t>(i);
  }
  return -1;
}

class GgmlDequant : public testing::TestWithParam<TypeCase> {};

TEST_P(GgmlDequant, MatchesGgmlBitForBitAtAnyAddress) {
  const TypeCase& type_case = GetParam();
  const nlohmann::json& entry = index_json().at("types").at(type_case.name);
  const auto traits = ggml_type_traits(type_case.type);
  ASSERT_EQ(entry.at("ggml_type").get<uint32_t>(), type_case.type);
  ASSERT_EQ(entry.at("block_elems").get<int64_t>(), traits.block_values);
  ASSERT_EQ(entry.at("block_bytes").get<int64_t>(), traits.block_bytes);
  ASSERT_TRUE(ggml::dequantizes(type_case.type));

  const int64_t n_blocks = entry.at("n_blocks").get<int64_t>();
  const std::vector<uint8_t> blocks = read_bytes(kDir + type_case.name + ".blocks");
  const std::vector<uint8_t> want = read_bytes(kDir + type_case.name + ".f32");
  const int64_t values = n_blocks * traits.block_values;
  ASSERT_EQ(static_cast<int64_t>(blocks.size()), n_blocks * traits.block_bytes);
  ASSERT_EQ(static_cast<int64_t>(want.size()), values * 4);

  // Blocks in a GGUF sit at any offset: decode them at an odd address too.
  for (size_t misalign : {size_t{0}, size_t{1}}) {
    std::vector<uint8_t> shifted(misalign, 0xee);
    shifted.insert(shifted.end(), blocks.begin(), blocks.end());
    std::vector<float> got(static_cast<size_t>(values), -1.0f);
    ASSERT_TRUE(
        ggml::dequantize_row(type_case.type, shifted.data() + misalign, values, got.data()));
    const int64_t at = first_bit_difference(got, want);
    if (at >= 0) {
      uint32_t expected = 0;
      std::memcpy(&expected, want.data() + 4 * at, 4);
      FAIL() << type_case.name << " value " << at << " (block " << at / traits.block_values
             << ", misalign " << misalign << "): got bits 0x" << std::hex
             << std::bit_cast<uint32_t>(got[at]) << ", ggml 0x" << expected;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryType, GgmlDequant, testing::ValuesIn(kTypes),
                         [](const testing::TestParamInfo<TypeCase>& info) {
                           return std::string(info.param.name);
                         });

/// The index dequantizing gives: the first value that is not finite, or -1.
int64_t first_non_finite_by_decoding(uint32_t type, const uint8_t* blocks, int64_t values) {
  std::vector<float> decoded(static_cast<size_t>(values));
  if (!ggml::dequantize_row(type, blocks, values, decoded.data())) return -2;
  for (int64_t i = 0; i < values; ++i)
    if (!std::isfinite(decoded[static_cast<size_t>(i)])) return i;
  return -1;
}

// The scan that reads only scales finds the value dequantizing finds: on
// ggml's own blocks, and on random bytes (random f16 fields are NaN or
// infinite one time in 32, an E8M0 scale overflows MXFP4 for e >= 253).
TEST_P(GgmlDequant, FirstNonFiniteIsTheOneDequantizingFinds) {
  const TypeCase& type_case = GetParam();
  const auto traits = ggml_type_traits(type_case.type);
  std::vector<uint8_t> blocks = read_bytes(kDir + type_case.name + ".blocks");
  int64_t values = static_cast<int64_t>(blocks.size()) / traits.block_bytes * traits.block_values;
  EXPECT_EQ(ggml::first_non_finite(type_case.type, blocks.data(), values),
            first_non_finite_by_decoding(type_case.type, blocks.data(), values));
  uint64_t state = 0x9e3779b97f4a7c15ull ^ type_case.type;
  const auto next_byte = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint8_t>(state >> 56);
  };
  int found = 0;
  for (int round = 0; round < 200; ++round) {
    blocks.assign(static_cast<size_t>(4 * traits.block_bytes), 0);
    for (uint8_t& b : blocks) b = next_byte();
    values = 4 * traits.block_values;
    const int64_t want = first_non_finite_by_decoding(type_case.type, blocks.data(), values);
    ASSERT_EQ(ggml::first_non_finite(type_case.type, blocks.data(), values), want)
        << type_case.name << " round " << round;
    found += want >= 0;
  }
  EXPECT_GT(found, 0) << type_case.name << ": no random block was non-finite; the test saw nothing";
}

TEST(GgmlDequantBlocks, PerTypeFunctionDecodesLikeTheDispatcher) {
  const std::vector<uint8_t> bytes = read_bytes(kDir + "Q4_K.blocks");
  const std::vector<uint8_t> want = read_bytes(kDir + "Q4_K.f32");
  const size_t n_blocks = bytes.size() / sizeof(ggml::BlockQ4_K);
  std::vector<ggml::BlockQ4_K> blocks(n_blocks);
  std::memcpy(blocks.data(), bytes.data(), bytes.size());
  std::vector<float> got(n_blocks * ggml::BlockQ4_K::kValues);
  ggml::dequantize_blocks(std::span<const ggml::BlockQ4_K>(blocks), std::span<float>(got));
  EXPECT_EQ(first_bit_difference(got, want), -1);
}

TEST(GgmlDequantRefusal, UnsupportedTypesAndPartialBlocksWriteNothing) {
  const std::vector<uint8_t> bytes(4096, 0x5a);
  std::vector<float> out(1024, 7.0f);
  const auto untouched = [&] {
    for (float value : out) {
      if (value != 7.0f) return false;
    }
    return true;
  };
  // Ids ggml removed (4, Q4_2; 31, Q4_0_4_4), types no published GLM-5 /
  // DeepSeek file uses (Q8_1, Q8_K, I8, F64, TQ1_0, TQ2_0, NVFP4, Q1_0, Q2_0),
  // ids past ggml's, and nonsense.
  for (uint32_t type :
       {4u, 9u, 15u, 24u, 28u, 31u, 34u, 35u, 40u, 41u, 42u, 43u, 1000u, 0xffffffffu}) {
    EXPECT_FALSE(ggml::dequantizes(type)) << type;
    EXPECT_FALSE(ggml::dequantize_row(type, bytes.data(), 256, out.data())) << type;
  }
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_Q4_K, bytes.data(), 255, out.data()));
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_Q4_K, bytes.data(), 384, out.data()));
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_Q4_0, bytes.data(), 33, out.data()));
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_IQ4_NL, bytes.data(), 16, out.data()));
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_F32, bytes.data(), -1, out.data()));
  EXPECT_FALSE(ggml::dequantize_row(GLMRT_GGML_Q8_0, bytes.data(), -32, out.data()));
  EXPECT_TRUE(untouched());
  // No values is a whole (empty) row.
  EXPECT_TRUE(ggml::dequantize_row(GLMRT_GGML_Q6_K, bytes.data(), 0, out.data()));
  EXPECT_TRUE(untouched());
}

TEST(GgmlScalars, HalfToFloatIsExactForEveryFiniteHalfAndQuietsNaNs) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto half = static_cast<uint16_t>(bits);
    const uint32_t got = std::bit_cast<uint32_t>(ggml::fp16_to_f32(half));
    const uint32_t exponent = (bits >> 10) & 0x1f;
    const uint32_t mantissa = bits & 0x3ff;
    const float sign = (bits & 0x8000) != 0 ? -1.0f : 1.0f;
    if (exponent == 0x1f) {
      const uint32_t quiet = mantissa != 0 ? 0x00400000u : 0;
      ASSERT_EQ(got, ((bits & 0x8000) << 16) | 0x7f800000u | quiet | (mantissa << 13)) << bits;
      continue;
    }
    // (1.m) x 2^(e-15) for normals, (0.m) x 2^-14 for subnormals: exact in float.
    const float want = exponent == 0 ? sign * std::ldexp(static_cast<float>(mantissa), -24)
                                     : sign * std::ldexp(static_cast<float>(1024 + mantissa),
                                                         static_cast<int>(exponent) - 25);
    ASSERT_EQ(got, std::bit_cast<uint32_t>(want)) << bits;
  }
}

TEST(GgmlScalars, Bf16AndE8m0) {
  EXPECT_EQ(std::bit_cast<uint32_t>(ggml::bf16_to_f32(0x3f80)), 0x3f800000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(ggml::bf16_to_f32(0xff81)), 0xff810000u);  // NaN kept as is
  for (int e = 0; e < 256; ++e) {
    const auto code = static_cast<uint8_t>(e);
    // ggml's E8M0 is 2^(e-127) with no NaN: 255 is infinity, and half of it 2^127.
    EXPECT_EQ(ggml::e8m0_to_f32(code), std::ldexp(1.0f, e - 127)) << e;
    EXPECT_EQ(ggml::e8m0_to_f32_half(code), std::ldexp(1.0f, e - 128)) << e;
  }
}

}  // namespace
