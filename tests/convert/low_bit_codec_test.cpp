// The 3-bit and two-level formats through the row codec: int3 packs exactly
// as weight_format.h documents it (rows of any width, partial blocks), and a
// two-level format costs little against f32 scales of the same small groups
// while beating per-group f32 scales of the same bits per weight.
#include <glmrt/base/weight_precision.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace glmrt {
namespace {

std::vector<float> gaussian_rows(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  // A scale per row and a few outliers, as trained weights have.
  for (int64_t r = 0; r < rows; ++r) {
    const float row_scale = 0.5f + static_cast<float>(r % 7) * 0.25f;
    for (int64_t c = 0; c < cols; ++c) {
      float v = normal(rng) * row_scale;
      if ((r * cols + c) % 211 == 0) v *= 6.f;
      w[static_cast<size_t>(r * cols + c)] = v;
    }
  }
  return w;
}

/// Squared error of `w` stored at `precision`, over the squared values.
double relative_error(const std::vector<float>& w, int64_t rows, int64_t cols,
                      WeightPrecision precision) {
  const Matrix m = Matrix::from_f32(w, rows, cols, precision, nullptr, "test");
  std::vector<float> row(static_cast<size_t>(cols));
  double err = 0, norm = 0;
  for (int64_t r = 0; r < rows; ++r) {
    m.dequantize_row(r, row);
    for (int64_t c = 0; c < cols; ++c) {
      const double v = w[static_cast<size_t>(r * cols + c)];
      err += (row[static_cast<size_t>(c)] - v) * (row[static_cast<size_t>(c)] - v);
      norm += v * v;
    }
  }
  return err / norm;
}

TEST(LowBitCodec, Int3RowsOfEveryWidthDecodeToTheirCodes) {
  // Values on the int3 grid (-3..3 with one scale per row) come back, whatever
  // the row's width: whole blocks of 128, partial blocks, widths off 8.
  for (int64_t cols : {1, 7, 8, 96, 127, 128, 129, 300, 384}) {
    SCOPED_TRACE(cols);
    std::vector<float> w(static_cast<size_t>(2 * cols));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    const Matrix m = Matrix::from_f32(w, 2, cols, WeightBits::int3, nullptr, "test");
    EXPECT_EQ(m.view().row_stride_bytes, plugin::packed_row_bytes(GLMRT_I3, cols));
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < 2; ++r) {
      m.dequantize_row(r, row);
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_NEAR(row[static_cast<size_t>(c)], w[static_cast<size_t>(r * cols + c)], 1e-5)
            << "row " << r << " col " << c;
    }
  }
}

TEST(LowBitCodec, Int3SitsBetweenInt2AndInt4) {
  const int64_t rows = 32, cols = 320;
  const auto w = gaussian_rows(rows, cols, 3);
  const double e4 = relative_error(w, rows, cols, WeightPrecision(WeightBits::int4, 64));
  const double e3 = relative_error(w, rows, cols, WeightPrecision(WeightBits::int3, 64));
  const double e2 = relative_error(w, rows, cols, WeightPrecision(WeightBits::int2, 64));
  EXPECT_LT(e4, e3);
  EXPECT_LT(e3, e2);
  // One bit less: about four times the squared error (clipping makes it a little less).
  EXPECT_GT(e3 / e4, 2.5);
  EXPECT_LT(e3 / e4, 5.0);
}

TEST(LowBitCodec, TwoLevelScalesCostLittleAgainstF32ScalesOfTheSameGroups) {
  // 96-wide rows (a partial block of 256), 320 (one and a quarter blocks) and 512.
  for (int64_t cols : {96, 320, 512}) {
    SCOPED_TRACE(cols);
    const int64_t rows = 24;
    const auto w = gaussian_rows(rows, cols, 5);
    for (WeightBits bits : {WeightBits::int4, WeightBits::int3, WeightBits::int2}) {
      const WeightPrecision two = WeightPrecision::two_level_of(bits);
      const auto group = static_cast<uint32_t>(plugin::two_level_group(weight_element_type(two)));
      const double e_two = relative_error(w, rows, cols, two);
      const double e_f32 = relative_error(w, rows, cols, WeightPrecision(bits, group));
      // Two-level fits the same groups with 8-bit scales: within a few percent.
      EXPECT_LT(e_two, e_f32 * 1.05) << precision_name(two);
      // And it beats f32 scales spending the same bits on groups twice as wide
      // (int4-k32 4.375 bits vs int4-g64 4.5).
      const double e_wide = relative_error(w, rows, cols, WeightPrecision(bits, 2 * group));
      EXPECT_LT(e_two, e_wide) << precision_name(two);
    }
  }
}

TEST(LowBitCodec, TwoLevelRowsHoldTheirSubScalesAfterTheCodes) {
  const int64_t rows = 3, cols = 300;
  const auto w = gaussian_rows(rows, cols, 9);
  const WeightPrecision p = WeightPrecision::two_level_of(WeightBits::int3);
  const Matrix m = Matrix::from_f32(w, rows, cols, p, nullptr, "test");
  const glmrt_weight_view v = m.view();
  EXPECT_EQ(v.format.element_type, GLMRT_I3K);
  EXPECT_EQ(v.format.group_size, plugin::kTwoLevelBlock);
  EXPECT_EQ(v.row_stride_bytes, plugin::packed_row_bytes(GLMRT_I3, cols) + (cols + 31) / 32);
  // Decoding by hand, from the layout the header documents, gives the codec's rows.
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    m.dequantize_row(r, row);
    const auto* bytes = static_cast<const uint8_t*>(v.data) + r * v.row_stride_bytes;
    const auto* sub =
        reinterpret_cast<const int8_t*>(bytes + plugin::packed_row_bytes(GLMRT_I3, cols));
    for (int64_t c = 0; c < cols; ++c) {
      const float code =
          static_cast<float>(static_cast<int>(plugin::int3_stored_code(bytes, cols, c)) - 4);
      const float scale = v.scales[r * 2 + c / 256] * static_cast<float>(sub[c / 32]);
      ASSERT_EQ(row[static_cast<size_t>(c)], code * scale) << r << " " << c;
    }
  }
}

TEST(LowBitCodec, PrecisionNamesRoundTrip) {
  for (const WeightPrecision& p : listed_precisions()) {
    const auto parsed = parse_precision(precision_name(p));
    ASSERT_TRUE(parsed) << precision_name(p);
    EXPECT_EQ(*parsed, p) << precision_name(p);
  }
  std::string why;
  EXPECT_FALSE(parse_precision("int3-k16", &why));
  EXPECT_NE(why.find("int4-k32, int3-k32 and int2-k16"), std::string::npos) << why;
  EXPECT_FALSE(parse_precision("int8-k32", &why));
  EXPECT_FALSE(parse_precision("bf16-k32", &why));
  EXPECT_DOUBLE_EQ(bits_per_weight(WeightPrecision::two_level_of(WeightBits::int4), 6144), 4.375);
  EXPECT_DOUBLE_EQ(bits_per_weight(WeightPrecision::two_level_of(WeightBits::int3), 6144), 3.375);
  EXPECT_DOUBLE_EQ(bits_per_weight(WeightPrecision::two_level_of(WeightBits::int2), 2048), 2.625);
  EXPECT_DOUBLE_EQ(bits_per_weight(WeightPrecision(WeightBits::int3, 64), 6144), 3.5);
  // A 96-wide int3 row: 24 bytes of low bits and 12 of high bits, exactly 3 bits a value.
  EXPECT_DOUBLE_EQ(bits_per_weight(WeightPrecision(WeightBits::int3, 32), 96), 4.0);
}

}  // namespace
}  // namespace glmrt
