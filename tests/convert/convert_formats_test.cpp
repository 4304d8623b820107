// What convert writes for one matrix: FP8 e4m3 with 128x128 block scales
// dequantizes exactly (f32 output equals codes x scales); BF16 quantized per
// row equals the load-time rule bit for bit (the seed's containers stay
// interchangeable) and per group stays within each format's error bound and
// below the per-row error; the format stamp and scales tensors are the
// documented ones.
#include <glmrt/base/error.h>
#include <glmrt/convert/convert.h>
#include <glmrt/convert/source_rows.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/stored_matrix.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "convert_test_dir.h"
#include "safetensors_writer.h"
#include "small_checkpoint.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::HostTensor;
using test::StoredDType;

constexpr const char* kDenseName = "model.layers.0.self_attn.q_a_proj.weight";

// DIR: a whole small checkpoint whose config fits kDenseName's shape [rows,
// cols], holding `tensors` in place of the generated ones.
void write_input(const fs::path& dir, const test::TensorList& tensors) {
  const HostTensor* w = test::find_tensor(tensors, kDenseName);
  const auto config = test::small_config(w->shape[1], w->shape[0]);
  test::TensorList all = test::small_checkpoint_tensors(config);
  for (const HostTensor& t : tensors) test::replace_tensor(all, t);
  test::write_small_checkpoint(dir, config, all);
}

// Random values of RMS ~0.05 with a few outliers, as trained weights have.
std::vector<float> weights(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 0.05f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  for (int64_t i = 0; i < n; i += 97) v[static_cast<size_t>(i)] *= 6.f;
  return v;
}

// Reads the converted matrix back as f32 through the runtime's loader path.
std::vector<float> read_back(const fs::path& dir, const std::string& name, int64_t rows,
                             int64_t cols, uint32_t* group = nullptr) {
  const TensorDirectory t = TensorDirectory::open(dir);
  const StoredMatrix m = find_stored_matrix(t, name, rows, cols);
  if (group) *group = m.group_size;
  if (!m.prequantized()) return t.read_f32(*m.values);
  std::vector<std::byte> bytes(m.values->byte_size);
  t.read_raw(*m.values, bytes);
  std::vector<float> scales = t.read_f32(*m.scales);
  SourceMatrix src{DType::U8, m.packed_type, bytes, scales, rows, cols, m.group_size};
  std::vector<float> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    src.decode_row(r, std::span(out).subspan(static_cast<size_t>(r * cols), cols));
  return out;
}

ConvertOptions options_for(const fs::path& from, const fs::path& to, const std::string& dense) {
  ConvertOptions o;
  o.from = from;
  o.to = to;
  o.dense = require_precision(dense, "--dense");
  return o;
}

TEST(ConvertFp8, BlockScaledCheckpointDequantizesExactly) {
  test::ConvertScratch dir("fp8");
  const int64_t rows = 200, cols = 300;  // partial 128-blocks on both axes
  HostTensor w{kDenseName, {rows, cols}, {}, StoredDType::f8_e4m3};
  std::mt19937 rng(7);
  for (int64_t i = 0; i < rows * cols; ++i) {
    uint8_t code = static_cast<uint8_t>(rng());
    if ((code & 0x7f) == 0x7f) code ^= 1;  // not NaN
    w.values.push_back(code);
  }
  HostTensor s{std::string(kDenseName) + "_scale_inv", {2, 3}, {}, StoredDType::f32};
  for (int k = 0; k < 6; ++k) s.values.push_back(std::ldexp(1.0f + 0.1f * k, -8 + k));
  HostTensor norm{"model.layers.0.input_layernorm.weight", {cols}, {}, StoredDType::bf16};
  norm.values.assign(cols, 1.0f);
  write_input(dir / "in", {w, s, norm});

  convert_checkpoint(options_for(dir / "in", dir / "out", "f32"));
  const auto got = read_back(dir / "out", kDenseName, rows, cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float expected = f8_e4m3_to_f32(static_cast<uint8_t>(w.values[r * cols + c])) *
                             s.values[(r / 128) * 3 + c / 128];
      ASSERT_EQ(got[r * cols + c], expected) << "at " << r << "," << c;
    }
  // The block scales are consumed, the norm copied as stored (BF16).
  const TensorDirectory out = TensorDirectory::open(dir / "out");
  EXPECT_FALSE(out.contains(std::string(kDenseName) + "_scale_inv"));
  EXPECT_EQ(out.at("model.layers.0.input_layernorm.weight").dtype, DType::BF16);
}

TEST(ConvertFp8, MissingBlockScalesAreNamed) {
  test::ConvertScratch dir("fp8-noscale");
  HostTensor w{kDenseName, {4, 8}, std::vector<float>(32, 0x38), StoredDType::f8_e4m3};
  write_input(dir / "in", {w});
  try {
    convert_checkpoint(options_for(dir / "in", dir / "out", "int8"));
    FAIL() << "FP8 without block scales was converted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(kDenseName) + "_scale_inv"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
}

TEST(ConvertFp8, E4m3CodesDecodeAsTheFormatSays) {
  EXPECT_EQ(f8_e4m3_to_f32(0x00), 0.0f);
  EXPECT_EQ(f8_e4m3_to_f32(0x38), 1.0f);          // exponent 7 = bias
  EXPECT_EQ(f8_e4m3_to_f32(0x7e), 448.0f);        // largest finite
  EXPECT_EQ(f8_e4m3_to_f32(0x01), 0.001953125f);  // smallest subnormal, 2^-9
  EXPECT_EQ(f8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0x7f)));
}

// A NaN or infinity in the input stops the conversion naming the tensor and
// the first bad element (the lowest row, though rows are encoded in parallel),
// and nothing is published.
struct NonFiniteCase {
  StoredDType dtype;
  float bad;  // the value, or for FP8 the code
  const char* kind;
};

class ConvertNonFinite : public ::testing::TestWithParam<NonFiniteCase> {};

TEST_P(ConvertNonFinite, FirstBadElementIsNamedAndNothingIsPublished) {
  const NonFiniteCase& c = GetParam();
  test::ConvertScratch dir(std::string("nonfinite-") + c.kind);
  const int64_t rows = 40, cols = 64;
  const bool fp8 = c.dtype == StoredDType::f8_e4m3;
  HostTensor w{kDenseName, {rows, cols}, {}, c.dtype};
  w.values = fp8 ? std::vector<float>(rows * cols, 0x38) : weights(rows * cols, 3);
  w.values[37 * cols + 5] = c.bad;
  w.values[12 * cols + 60] = c.bad;
  test::TensorList tensors{w};
  if (fp8)
    tensors.push_back({std::string(kDenseName) + "_scale_inv", {1, 1}, {1.f}, StoredDType::f32});
  write_input(dir / "in", tensors);
  for (const char* format : {"int4-g32", "int8", "f32"}) {
    SCOPED_TRACE(format);
    try {
      convert_checkpoint(options_for(dir / "in", dir / "out", format));
      ADD_FAILURE() << "a non-finite weight was converted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(kDenseName), std::string::npos) << what;
      EXPECT_NE(what.find("[12, 60]"), std::string::npos) << what;
      EXPECT_NE(what.find("not finite"), std::string::npos) << what;
    }
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ConvertNonFinite,
                         ::testing::Values(NonFiniteCase{StoredDType::bf16, INFINITY, "bf16-inf"},
                                           NonFiniteCase{StoredDType::f32, NAN, "f32-nan"},
                                           NonFiniteCase{StoredDType::f16, -INFINITY, "f16-inf"},
                                           NonFiniteCase{StoredDType::f8_e4m3, 0x7f, "f8-nan"}),
                         [](const auto& info) {
                           std::string name = info.param.kind;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

struct FormatCase {
  const char* format;
  double max_relative_rms;  // RMS error / RMS of the weights
};

class ConvertBf16 : public ::testing::TestWithParam<FormatCase> {};

TEST_P(ConvertBf16, WithinTheFormatsErrorBound) {
  const FormatCase fc = GetParam();
  test::ConvertScratch dir(std::string("bf16-") + fc.format);
  const int64_t rows = 48, cols = 320;
  HostTensor w{kDenseName, {rows, cols}, weights(rows * cols, 3), StoredDType::bf16};
  test::round_tensor_to_stored(w);
  write_input(dir / "in", {w});
  convert_checkpoint(options_for(dir / "in", dir / "out", fc.format));
  const WeightPrecision p = require_precision(fc.format, "format");
  uint32_t group = 0;
  const auto got = read_back(dir / "out", kDenseName, rows, cols, &group);
  EXPECT_EQ(group, p.group);
  double err = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - w.values[i]) * (got[i] - w.values[i]);
    norm += w.values[i] * w.values[i];
  }
  EXPECT_LT(std::sqrt(err / norm), fc.max_relative_rms) << fc.format;

  // Per row: the load-time rule (and the seed's), bit for bit.
  if (p.group == 0) {
    const Matrix m = Matrix::from_f32(w.values, rows, cols, p, nullptr, "test");
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      m.dequantize_row(r, row);
      for (int64_t c = 0; c < cols; ++c) ASSERT_EQ(row[c], got[r * cols + c]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ConvertBf16,
                         // Measured: 0.018, 0.0097, 0.318, 0.150, 0.116, 0.854, 0.369;
                         // int3-g64 0.272, int3-g32 0.217, int4-k32 0.116, int3-k32 0.217,
                         // int2-k16 0.312, int3 0.604 (outliers every 97th weight make
                         // per-row scales coarse).
                         ::testing::Values(FormatCase{"int8", 0.021}, FormatCase{"int8-g64", 0.012},
                                           FormatCase{"int4", 0.36}, FormatCase{"int4-g64", 0.17},
                                           FormatCase{"int4-g32", 0.135}, FormatCase{"int2", 0.95},
                                           FormatCase{"int2-g32", 0.43},
                                           FormatCase{"int3-g64", 0.30}, FormatCase{"int3-g32", 0.24},
                                           FormatCase{"int4-k32", 0.13}, FormatCase{"int3-k32", 0.24},
                                           FormatCase{"int2-k16", 0.35}, FormatCase{"int3", 0.67},
                                           FormatCase{"bf16", 1e-9}, FormatCase{"f32", 1e-9}),
                         [](const auto& info) {
                           std::string name = info.param.format;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(ConvertStamp, PerGroupScalesGoInGqsAndTheStampNamesTheGroup) {
  test::ConvertScratch dir("stamp");
  HostTensor w{kDenseName, {8, 128}, weights(8 * 128, 5), StoredDType::bf16};
  write_input(dir / "in", {w});
  convert_checkpoint(options_for(dir / "in", dir / "out", "int4-g32"));
  const TensorDirectory t = TensorDirectory::open(dir / "out");
  EXPECT_FALSE(t.contains(std::string(kDenseName) + ".qs"));
  const TensorInfo& s = t.at(std::string(kDenseName) + ".gqs");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(t.at(kDenseName).stamp, StampedFormat::int4);
  EXPECT_EQ(t.at(kDenseName).stamp_group, 32u);
}

}  // namespace
}  // namespace glmrt
