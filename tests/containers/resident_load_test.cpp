// The resident loader: tensors read straight into place (O_DIRECT windows at
// unaligned offsets and an unaligned end of file), conversions in blocks of
// rows on the I/O threads equal to converting the whole matrix, tensors kept
// at the dense precision, read errors that name the file and tensor, and the
// progress line.
#include <glmrt/base/error.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/tensor_loader.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "checkpoint_generator.h"
#include "container_twin.h"
#include "safetensors_writer.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::HostTensor;
using test::StoredDType;

HostTensor random_tensor(const std::string& name, std::vector<int64_t> shape, StoredDType dtype,
                         uint64_t seed) {
  HostTensor t{name, std::move(shape), {}, dtype};
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  t.values.resize(t.numel());
  for (float& v : t.values) v = normal(random);
  test::round_tensor_to_stored(t);
  return t;
}

std::vector<std::byte> bytes_of(const glmrt_weight_view& v) {
  const auto* p = static_cast<const std::byte*>(v.data);
  return {p, p + v.rows * v.row_stride_bytes};
}

std::vector<float> scales_of(const glmrt_weight_view& v) {
  return v.scales ? std::vector<float>(v.scales, v.scales + v.rows) : std::vector<float>{};
}

// F32 matrices over 1 MiB (read with O_DIRECT) at offsets that are not
// multiples of 4096, the last ending the file at an unaligned size.
TEST(ResidentLoad, DirectReadsLandInPlaceAtUnalignedOffsetsAndEndOfFile) {
  test::ScratchDir dir("glmrt-resident");
  const HostTensor small = random_tensor("small", {3}, StoredDType::f32, 1);
  const HostTensor a = random_tensor("a", {300, 1000}, StoredDType::f32, 2);
  const HostTensor b = random_tensor("b", {257, 1027}, StoredDType::f32, 3);
  test::FileLayout layout;
  layout.offsets = {0, 12 + 40, 12 + 40 + 1200000 + 5};
  test::write_safetensors_file(dir.path() / "model.safetensors", {small, a, b}, layout);
  const TensorDirectory files = TensorDirectory::open(dir.path());
  TensorLoader loader(files, nullptr);
  Matrix ma = loader.matrix("a", 300, 1000, WeightBits::f32, "test");
  Matrix mb = loader.matrix("b", 257, 1027, WeightBits::f32, "test");
  const LoadSummary& summary = loader.finish();
  EXPECT_EQ(summary.tensors_read_in_place, 2);
  EXPECT_EQ(summary.bytes, (300 * 1000 + 257 * 1027) * 4u);
  for (const auto& [m, t] : {std::pair{&ma, &a}, std::pair{&mb, &b}}) {
    std::vector<float> got(t->values.size());
    std::memcpy(got.data(), m->view().data, got.size() * 4);
    EXPECT_EQ(got, t->values) << t->name;
  }
}

// A BF16 matrix of several read tasks converted to int8 block by block equals
// the whole matrix converted at once.
TEST(ResidentLoad, ConversionInBlocksEqualsWholeMatrixConversion) {
  test::ScratchDir dir("glmrt-resident");
  const HostTensor w = random_tensor("w", {3000, 2048}, StoredDType::bf16, 4);  // 12 MB
  test::write_safetensors_file(dir.path() / "model.safetensors", {w});
  const TensorDirectory files = TensorDirectory::open(dir.path());
  TensorLoader loader(files, nullptr);
  Matrix m = loader.matrix("w", 3000, 2048, WeightBits::int8, "test");
  EXPECT_EQ(loader.finish().tensors_converted, 1);
  const Matrix whole = Matrix::from_f32(w.values, 3000, 2048, WeightBits::int8, nullptr, "test");
  EXPECT_EQ(bytes_of(m.view()), bytes_of(whole.view()));
  EXPECT_EQ(scales_of(m.view()), scales_of(whole.view()));
}

// embed_tokens / lm_head stored int8 under a profile whose dense precision is
// int8 stay int8 (also_adopt); asked at bf16 alone they are converted and noted.
TEST(ResidentLoad, PrequantizedTensorAtTheAdoptedPrecisionIsKept) {
  test::ScratchDir dir("glmrt-resident");
  const HostTensor w = random_tensor("model.embed_tokens.weight", {64, 32}, StoredDType::f32, 5);
  auto [packed, scales] = test::quantize_rows(w, GLMRT_I8);
  test::write_safetensors_file(dir.path() / "model.safetensors", {packed, scales});
  const TensorDirectory files = TensorDirectory::open(dir.path());
  TensorLoader loader(files, nullptr);
  Matrix kept = loader.matrix(w.name, 64, 32, WeightBits::bf16, "test", WeightBits::int8);
  Matrix widened = loader.matrix(w.name, 64, 32, WeightBits::bf16, "test");
  const LoadSummary& summary = loader.finish();
  EXPECT_EQ(kept.element_type(), GLMRT_I8);
  EXPECT_EQ(widened.element_type(), GLMRT_BF16);
  ASSERT_EQ(summary.requantized.size(), 1u);
  EXPECT_EQ(summary.requantized[0], "model.embed_tokens.weight (int8 -> bf16)");
  std::vector<float> row_kept(32), row_widened(32);
  for (int64_t r = 0; r < 64; ++r) {
    kept.dequantize_row(r, row_kept);
    widened.dequantize_row(r, row_widened);
    for (int c = 0; c < 32; ++c)
      EXPECT_NEAR(row_kept[c], row_widened[c], 1e-2f * (1 + std::fabs(row_kept[c])));
  }
}

TEST(ResidentLoad, ReadErrorNamesTheFileAndTensor) {
  test::ScratchDir dir("glmrt-resident");
  const HostTensor a = random_tensor("a", {512, 1024}, StoredDType::f32, 6);
  const HostTensor b = random_tensor("b", {64, 64}, StoredDType::bf16, 7);
  const fs::path file = dir.path() / "model.safetensors";
  test::write_safetensors_file(file, {a, b});
  const TensorDirectory files = TensorDirectory::open(dir.path());
  TensorLoader loader(files, nullptr);
  Matrix ma = loader.matrix("a", 512, 1024, WeightBits::f32, "test");
  Matrix mb = loader.matrix("b", 64, 64, WeightBits::int8, "test");
  ASSERT_EQ(::truncate(file.c_str(), 1000), 0);  // after the headers were read
  try {
    loader.finish();
    FAIL() << "a truncated file loaded";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("tensor '"), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
}

TEST(ProgressLine, ShowsBytesRateAndTimeLeft) {
  const std::string line = format_progress("loading", 1'500'000'000, 3'000'000'000, 2.0, false);
  EXPECT_NE(line.find("loading ["), std::string::npos) << line;
  EXPECT_NE(line.find(" 50%"), std::string::npos) << line;
  EXPECT_NE(line.find("1.50/3.00 GB"), std::string::npos) << line;
  EXPECT_NE(line.find("0.75 GB/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA 2s"), std::string::npos) << line;
  const std::string done = format_progress("loading", 3'000'000'000, 3'000'000'000, 75.0, true);
  EXPECT_NE(done.find("100%"), std::string::npos) << done;
  EXPECT_NE(done.find("in 1m15s"), std::string::npos) << done;
}

}  // namespace
}  // namespace glmrt
