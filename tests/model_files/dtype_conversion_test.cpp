// BF16 and F16 widen to f32 exactly; checked against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <glmrt/model_files/safetensors.h>
#include "dtype_conversion.h"
#include "test_files.h"

namespace glmrt {
namespace {

using model_files::bf16_to_f32;
using model_files::f16_to_f32;

TEST(Bf16ToF32, HandComputedValues) {
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(bf16_to_f32(0x3EAB), 0.333984375f);             // 2^-2 * (1 + 43/128)
  EXPECT_EQ(bf16_to_f32(0x4049), 3.140625f);                // 2 * (1 + 73/128)
  EXPECT_EQ(bf16_to_f32(0x0001), std::ldexp(1.0f, -133));   // smallest subnormal
  EXPECT_EQ(bf16_to_f32(0x7F7F), std::ldexp(255.0f, 120));  // largest finite
  EXPECT_EQ(bf16_to_f32(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bf16_to_f32(0xFF80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7FC0)));
  EXPECT_TRUE(std::signbit(bf16_to_f32(0x8000)));
  EXPECT_EQ(bf16_to_f32(0x8000), 0.0f);
}

TEST(F16ToF32, NormalValues) {
  EXPECT_EQ(f16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x3555), 0.333251953125f);  // 2^-2 * (1 + 341/1024)
  EXPECT_EQ(f16_to_f32(0x3800), 0.5f);
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);               // largest finite
  EXPECT_EQ(f16_to_f32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
}

TEST(F16ToF32, SubnormalsAreExact) {
  EXPECT_EQ(f16_to_f32(0x0001), 5.9604644775390625e-08f);  // 2^-24
  EXPECT_EQ(f16_to_f32(0x8001), -5.9604644775390625e-08f);
  EXPECT_EQ(f16_to_f32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(f16_to_f32(0x0200), std::ldexp(1.0f, -15));
}

TEST(F16ToF32, ZerosInfinitiesAndNan) {
  EXPECT_EQ(f16_to_f32(0x0000), 0.0f);
  EXPECT_FALSE(std::signbit(f16_to_f32(0x0000)));
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_EQ(f16_to_f32(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_to_f32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7E00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7C01)));  // signalling NaN stays NaN, not inf
  EXPECT_TRUE(std::isnan(f16_to_f32(0xFE00)));
}

TEST(F16ToF32, EveryFiniteHalfRoundTripsThroughDoubleArithmetic) {
  // Reference: (-1)^s * 2^(e-15) * (1 + m/1024), or 2^-14 * m/1024 for e = 0.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint32_t e = (bits >> 10) & 0x1f;
    if (e == 0x1f) continue;
    const double m = bits & 0x3ff;
    const double magnitude =
        e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1 + m / 1024.0, int(e) - 15);
    const double expected = (bits & 0x8000) ? -magnitude : magnitude;
    ASSERT_EQ(f16_to_f32(static_cast<uint16_t>(bits)), static_cast<float>(expected)) << bits;
  }
}

TEST(DtypeNames, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::F8_E4M3), 1u);
  EXPECT_EQ(dtype_name(DType::F8_E5M2), "F8_E5M2");
  EXPECT_EQ(model_files::parse_dtype("BF16"), DType::BF16);
  EXPECT_FALSE(model_files::parse_dtype("bf16").has_value());
}

TEST(DecodeToF32, PublicEntryPoint) {
  EXPECT_TRUE(is_float_dtype(DType::BF16));
  EXPECT_FALSE(is_float_dtype(DType::I8));
  const std::string bytes = test::bytes_of<uint16_t>({0x3C00, 0x0001});
  std::vector<float> out(2);
  decode_to_f32(DType::F16, std::as_bytes(std::span(bytes)), out);
  EXPECT_EQ(out, (std::vector<float>{1.0f, std::ldexp(1.0f, -24)}));
  test::expect_error([&] { decode_to_f32(DType::I8, std::as_bytes(std::span(bytes)), out); },
                     {"I8"});
  std::vector<float> wrong(3);
  test::expect_error([&] { decode_to_f32(DType::F16, std::as_bytes(std::span(bytes)), wrong); },
                     {"F16"});
}

TEST(ReadF32, LargeBf16TensorConvertsAcrossStagingChunks) {
  // More than one 1 MiB staging chunk of BF16 values.
  constexpr size_t count = 700'000;
  std::string data(count * 2, '\0');
  for (size_t i = 0; i < count; ++i) {
    const uint16_t bits = static_cast<uint16_t>(0x3F80 + (i % 128));  // 1 + (i%128)/128
    std::memcpy(data.data() + 2 * i, &bits, 2);
  }
  test::TempFolder tmp;
  const auto file = tmp.path() / "big.safetensors";
  test::write_file(file, test::safetensors_file({{"big", "BF16", {int64_t(count)}, data}}));
  const auto dir = TensorDirectory::open_file(file);
  const auto values = dir.read_f32(dir.at("big"));
  ASSERT_EQ(values.size(), count);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(values[i], 1.0f + float(i % 128) / 128.0f) << i;
  }
}

}  // namespace
}  // namespace glmrt
