// Every value read as f32 must be finite: NaN and infinities (as stored, or
// produced by the conversion, e.g. an F64 beyond the f32 range) are refused
// naming the tensor, its file and the first bad element. Quantization used to
// turn a NaN into 0 silently.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <glmrt/model_files/safetensors.h>
#include "finite_values.h"
#include "test_files.h"

namespace glmrt {
namespace {

using model_files::find_non_finite;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(FindNonFinite, CountsNaNAndInfinitiesAndKeepsTheFirst) {
  const std::vector<float> clean = {0.f, -1.f, std::numeric_limits<float>::max(),
                                    std::numeric_limits<float>::denorm_min()};
  EXPECT_EQ(find_non_finite(clean).count, 0u);
  const std::vector<float> bad = {1.f, 2.f, -kInf, 3.f, kNaN, kInf};
  const auto found = find_non_finite(bad);
  EXPECT_EQ(found.count, 3u);
  EXPECT_EQ(found.first_index, 2u);
  EXPECT_EQ(found.first_value, -kInf);
}

TEST(FindNonFinite, MergeKeepsTheEarliestAndSumsCounts) {
  model_files::NonFiniteValues total;
  total.merge(find_non_finite(std::vector<float>{1.f, 2.f}), 0);
  total.merge(find_non_finite(std::vector<float>{1.f, kNaN, kNaN}), 2);
  total.merge(find_non_finite(std::vector<float>{kInf}), 5);
  EXPECT_EQ(total.count, 3u);
  EXPECT_EQ(total.first_index, 3u);
  EXPECT_TRUE(std::isnan(total.first_value));
}

TEST(FindNonFinite, CoordinatesOfAnElement) {
  EXPECT_EQ(model_files::element_coordinates(6, {3, 4}), "[1, 2]");
  EXPECT_EQ(model_files::element_coordinates(23, {2, 3, 4}), "[1, 2, 3]");
  EXPECT_EQ(model_files::element_coordinates(5, {7}), "[5]");
}

/// Writes `tensors` as DIR/model.safetensors and reads `name` as f32.
std::vector<float> read_back(const std::vector<test::TensorSpec>& tensors,
                             const std::string& name) {
  test::TempFolder tmp;
  test::write_file(tmp.path() / "model.safetensors", test::safetensors_file(tensors));
  const TensorDirectory dir = TensorDirectory::open(tmp.path());
  return dir.read_f32(dir.at(name));
}

TEST(FiniteWeights, NaNInAnF32TensorNamesTheTensorAndTheElement) {
  std::vector<float> w(12, 0.5f);
  w[6] = kNaN;
  test::expect_error(
      [&] {
        read_back({{"ok", "F32", {1}, test::bytes_of<float>({1.f})},
                   {"model.layers.0.mlp.gate.weight",
                    "F32",
                    {3, 4},
                    std::string(reinterpret_cast<const char*>(w.data()), w.size() * 4)}},
                  "model.layers.0.mlp.gate.weight");
      },
      {"model.layers.0.mlp.gate.weight", "model.safetensors", "1 of its 12 values", "nan at [1, 2]",
       "finite"});
}

TEST(FiniteWeights, InfinityInBf16AndNaNInF16AreRefused) {
  // bf16 0x7f80 = +inf; f16 0x7e00 = NaN.
  test::expect_error(
      [&] {
        read_back(
            {{"b", "BF16", {2, 2}, test::bytes_of<uint16_t>({0x3f80, 0x3f80, 0x3f80, 0x7f80})}},
            "b");
      },
      {"'b'", "inf at [1, 1]"});
  test::expect_error(
      [&] {
        read_back({{"h", "F16", {3}, test::bytes_of<uint16_t>({0x7e00, 0x3c00, 0x3c00})}}, "h");
      },
      {"'h'", "nan at [0]"});
}

TEST(FiniteWeights, AnF64BeyondTheF32RangeIsRefused) {
  test::expect_error(
      [&] {
        read_back({{"d", "F64", {2}, test::bytes_of<double>({1.0, 1e300})}}, "d");
      },
      {"'d'", "inf at [1]"});
}

TEST(FiniteWeights, LargeTensorsReadInParallelChunksKeepEveryValueAndFindTheFirstBadOne) {
  // Three and a half 1 MiB chunks of BF16: the chunks are read in parallel.
  const size_t n = 1800000;
  std::vector<uint16_t> bits(n);
  for (size_t i = 0; i < n; ++i) bits[i] = static_cast<uint16_t>(0x3c00 + i % 512);
  const std::string clean(reinterpret_cast<const char*>(bits.data()), n * 2);
  const std::vector<float> values = read_back({{"big", "BF16", {1800, 1000}, clean}}, "big");
  ASSERT_EQ(values.size(), n);
  for (size_t i = 0; i < n; i += 997) {
    uint32_t expected = static_cast<uint32_t>(bits[i]) << 16;
    float f;
    std::memcpy(&f, &expected, 4);
    ASSERT_EQ(values[i], f) << i;
  }
  bits[1234567] = 0x7fc0;  // NaN in the third chunk
  bits[1700001] = 0xff80;  // -inf in the fourth
  const std::string bad(reinterpret_cast<const char*>(bits.data()), n * 2);
  test::expect_error(
      [&] {
        read_back({{"big", "BF16", {1800, 1000}, bad}}, "big");
      },
      {"'big'", "2 of its 1800000 values", "nan at [1234, 567]"});
}

}  // namespace
}  // namespace glmrt
