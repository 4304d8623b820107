#include <glmrt/base/printable.h>
#include <gtest/gtest.h>

namespace glmrt {
namespace {

TEST(Printable, KeepsPlainTextAndValidUtf8) {
  EXPECT_EQ(printable("model.layers.3.mlp"), "model.layers.3.mlp");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(Printable, EscapesTerminalControlSequences) {
  EXPECT_EQ(printable("\x1b[2J\x1b]0;owned\x07"), "\\x1b[2J\\x1b]0;owned\\x07");
  EXPECT_EQ(printable("a\nb\tc\rd\\e\x7f"), "a\\nb\\tc\\rd\\\\e\\x7f");
  EXPECT_EQ(printable(std::string_view("nul\0byte", 8)), "nul\\x00byte");
}

TEST(Printable, EscapesC1ControlsAndInvalidUtf8) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");  // CSI as a C1 control
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");           // cut sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
}

TEST(Printable, CutsLongInputAtTheLimit) {
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("abc", 3), "abc");
}

}  // namespace
}  // namespace glmrt
