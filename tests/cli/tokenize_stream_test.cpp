// `glmrt tokenize` reads its input a chunk at a time and prints the ids as
// they come: the ids are exactly those of encoding the text whole (issue 34;
// the memory it takes is measured in tests/memory/text_input_memory_test).
#include <glmrt/text/tokenizer.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt {
namespace {

// ~600 KB: a few of tokenize's 256 KiB chunks, words, numbers, punctuation,
// UTF-8 and special tokens among them.
std::string long_text() {
  std::string text;
  for (int i = 0; text.size() < 600'000; ++i)
    text += "Line " + std::to_string(i) + ": caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd, it's   spaced" +
            (i % 50 == 0 ? "<|user|>" : "") + (i % 7 == 0 ? "\n\n" : "\n");
  return text;
}

TEST(TokenizeStream, IdsMatchEncodingTheWholeText) {
  const std::string file = test::tiny_model() + "/tokenizer.json";
  const auto tokenizer = text::Tokenizer::from_file(file);
  const std::string text = long_text();
  for (const bool special : {false, true}) {
    std::vector<std::string> args{"tokenize", "--tokenizer", file};
    if (special) args.push_back("--special");
    const auto r = test::run_glmrt(args, test::Stdout::captured, text);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    ASSERT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.back(), '\n');
    EXPECT_EQ(nlohmann::json::parse(r.out).get<std::vector<text::TokenId>>(),
              tokenizer.encode(text, special));
  }
}

TEST(TokenizeStream, EmptyInputIsAnEmptyArray) {
  const auto r =
      test::run_glmrt({"tokenize", "--tokenizer", test::tiny_model() + "/tokenizer.json"},
                      test::Stdout::captured, "");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");
}

}  // namespace
}  // namespace glmrt
