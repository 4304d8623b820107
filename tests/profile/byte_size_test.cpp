#include <glmrt/base/error.h>
#include <glmrt/base/byte_size.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace glmrt {
namespace {

TEST(ByteSizeTest, ParsesBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_byte_size("0"), 0u);
  EXPECT_EQ(parse_byte_size("512B"), 512u);
  EXPECT_EQ(parse_byte_size("1KiB"), 1024u);
  EXPECT_EQ(parse_byte_size("3 MiB"), 3u << 20);
  EXPECT_EQ(parse_byte_size("20GiB"), 20ull << 30);
  EXPECT_EQ(parse_byte_size("2TiB"), 2ull << 40);
  EXPECT_EQ(parse_byte_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(parse_byte_size("5KB"), 5000u);
  EXPECT_EQ(parse_byte_size("7MB"), 7000000u);
  EXPECT_EQ(parse_byte_size("16GB"), 16000000000u);
  EXPECT_EQ(parse_byte_size("1TB"), 1000000000000u);
}

TEST(ByteSizeTest, RefusesMissingOrUnknownUnitsAndNonsense) {
  EXPECT_THAT([] { parse_byte_size("1024"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("no unit")));
  EXPECT_THAT([] { parse_byte_size("20gb"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("unknown unit `gb`")));
  EXPECT_THROW(parse_byte_size("GiB"), Error);
  EXPECT_THROW(parse_byte_size("-1GiB"), Error);
  EXPECT_THROW(parse_byte_size(""), Error);
  EXPECT_THAT([] { parse_byte_size("99999999TiB"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("64 bits")));
}

TEST(ByteSizeTest, FormatsWithTheLargestFittingUnit) {
  EXPECT_EQ(format_byte_size(512), "512 B");
  EXPECT_EQ(format_byte_size(20ull << 30), "20 GiB");
  EXPECT_EQ(format_byte_size(3ull << 29), "1.50 GiB");
}

}  // namespace
}  // namespace glmrt
