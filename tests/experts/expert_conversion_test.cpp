// Experts converted at load (float on disk, integer in the slot): a matrix
// large enough to be shared out over the compute team must come out with the
// bytes one thread gives it, and a NaN must be reported at the same place
// whichever thread met it first. Small matrices (the test models') run on one
// thread (base/parallel_work.h), so the team's path is forced here with a
// matrix above that size.
#include <glmrt/base/error.h>
#include <glmrt/base/parallel_work.h>
#include <glmrt/experts/expert_slot_fill.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace glmrt {
namespace {

constexpr int64_t kRows = 192, kCols = 256;  // 49152 values: above the team's minimum
static_assert(kRows * kCols >= kMinParallelConvertedValues);

uint16_t to_bf16(float f) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
}

/// Three BF16 matrices side by side in a staging buffer, planned as int8
/// rows with one scale per row in the slot.
struct Bf16Expert {
  std::vector<TensorInfo> tensors;
  ExpertLayout layout;
  ExpertSlotPlan plan;
  std::vector<std::byte> staging;
  std::vector<std::filesystem::path> files{"/models/m/experts.safetensors"};

  Bf16Expert() {
    const uint64_t bytes = kRows * kCols * 2;
    const char* names[3] = {"gate_proj", "up_proj", "down_proj"};
    tensors.reserve(3);
    for (int k = 0; k < 3; ++k)
      tensors.push_back(
          {fmt_name(names[k]), DType::BF16, {kRows, kCols}, 0, 4096 + k * bytes, bytes});
    std::mt19937 random(7);
    std::normal_distribution<float> normal(0.f, 0.05f);
    staging.resize(3 * bytes);
    uint64_t slot_at = 0;
    for (int k = 0; k < 3; ++k) {
      layout.tensors[k] = {&tensors[k], nullptr, -1, 0, kRows, kCols};
      SlotMatrix& m = plan.matrices[k];
      m.type = GLMRT_I8;
      m.rows = kRows;
      m.cols = kCols;
      m.row_bytes = kCols;
      m.data = slot_at;
      m.scales = slot_at + kRows * kCols;
      m.source_values = k * bytes;
      slot_at = m.scales + kRows * sizeof(float);
      for (int64_t i = 0; i < kRows * kCols; ++i) {
        const uint16_t v = to_bf16(normal(random));
        std::memcpy(staging.data() + k * bytes + i * 2, &v, 2);
      }
    }
    plan.layout = &layout;
    plan.slot_bytes = slot_at;
  }

  static std::string fmt_name(const char* matrix) {
    return std::string("model.layers.3.mlp.experts.5.") + matrix + ".weight";
  }

  void put(int k, int64_t row, int64_t col, float value) {
    const uint16_t v = to_bf16(value);
    std::memcpy(staging.data() + plan.matrices[k].source_values + (row * kCols + col) * 2, &v, 2);
  }

  std::vector<std::byte> convert(int threads) const {
    std::vector<std::byte> slot(plan.slot_bytes);
    std::vector<float> rows(static_cast<size_t>(threads * kCols));
    convert_expert(plan, staging, slot.data(), rows, threads, {3, 5, &files});
    return slot;
  }

  std::string error(int threads) const {
    try {
      convert(threads);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST(ExpertConversion, ATeamConvertsALargeMatrixAsOneThreadDoes) {
  const Bf16Expert expert;
  const std::vector<std::byte> alone = expert.convert(1);
  EXPECT_EQ(expert.convert(2), alone);
  EXPECT_EQ(expert.convert(3), alone);
  // Something was written: the scales of every row are set.
  float first_scale = 0.f;
  std::memcpy(&first_scale, alone.data() + expert.plan.matrices[0].scales, sizeof(float));
  EXPECT_GT(first_scale, 0.f);
}

TEST(ExpertConversion, TheFirstNonFiniteValueIsReportedWhicheverThreadMeetsIt) {
  Bf16Expert expert;
  // One in each half of the up matrix's rows (each thread of two meets one);
  // the earlier is the one to name.
  expert.put(1, kRows - 3, 17, std::numeric_limits<float>::infinity());
  expert.put(1, 40, 9, std::numeric_limits<float>::quiet_NaN());
  const std::string alone = expert.error(1);
  EXPECT_THAT(alone, testing::HasSubstr("model.layers.3.mlp.experts.5.up_proj.weight"));
  EXPECT_THAT(alone, testing::HasSubstr("row 40, column 9"));
  EXPECT_THAT(alone, testing::HasSubstr("/models/m/experts.safetensors"));
  for (int threads : {2, 3}) EXPECT_EQ(expert.error(threads), alone) << threads << " threads";
}

}  // namespace
}  // namespace glmrt
