// Numbers in messages: whole numbers printed in full, never as 1.04858e+06.
#include <glmrt/base/number_text.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

TEST(NumberText, WholeNumbersArePrintedInFull) {
  EXPECT_EQ(number_text(1048576), "1048576");
  EXPECT_EQ(number_text(-2), "-2");
  EXPECT_EQ(number_text(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(number_text(0), "0");
}

TEST(NumberText, OtherNumbersReadBackAsTheSameValue) {
  EXPECT_EQ(number_text(0.5), "0.5");
  EXPECT_EQ(number_text(1e300), "1e+300");
  EXPECT_EQ(std::stod(number_text(0.1)), 0.1);
}

}  // namespace
}  // namespace glmrt
