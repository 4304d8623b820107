// Limits met while converting weights: an f32 value above bf16's largest
// finite value becomes inf in bf16 and is refused; a budget error prints
// sizes a reader can act on (a few KiB used to read "needs 0.0 MiB more").
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/weights/matrix.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <vector>

namespace glmrt::conversion_limits_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ConversionLimits, AnF32ValueBeyondBf16RangeIsRefused) {
  std::vector<float> w(6, 1.0f);
  w[4] = std::numeric_limits<float>::max();  // rounds up to bf16 inf
  EXPECT_THAT(
      error_of([&] { Matrix::from_f32(w, 2, 3, WeightBits::bf16, nullptr, "weights"); }),
      AllOf(HasSubstr("weights: 1 of 6 values are not finite in bf16"), HasSubstr("at [1, 1]")));
  w[4] = 3.0e38f;  // below bf16's largest finite value: fine
  EXPECT_NO_THROW(Matrix::from_f32(w, 2, 3, WeightBits::bf16, nullptr, "weights"));
  w[4] = std::numeric_limits<float>::max();  // f32 and int8 hold it
  EXPECT_NO_THROW(Matrix::from_f32(w, 2, 3, WeightBits::f32, nullptr, "weights"));
  EXPECT_NO_THROW(Matrix::from_f32(w, 2, 3, WeightBits::int8, nullptr, "weights"));
}

TEST(ConversionLimits, BudgetErrorsPrintSmallSizesInBytesOrKiB) {
  MemoryBudget budget(513 * 1024);
  budget.charge("dense weights", 512 * 1024);
  EXPECT_THAT(error_of([&] { budget.charge("dense weights", 8192); }),
              AllOf(HasSubstr("dense weights needs 8 KiB more"),
                    HasSubstr("512 KiB of 513 KiB already used")));
  MemoryBudget small(100);
  EXPECT_THAT(error_of([&] { small.charge("norms", 1000); }),
              AllOf(HasSubstr("norms needs 1000 B more"), HasSubstr("0 B of 100 B")));
}

}  // namespace glmrt::conversion_limits_test
