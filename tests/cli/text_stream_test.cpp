// What `glmrt run` and `glmrt chat` print of an answer: special tokens left
// out but for <think> and </think>, which show where the reasoning ends.
#include "text_stream.h"

#include <glmrt/text/tokenizer.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace glmrt::cli {
namespace {

TEST(TextStream, SkipsSpecialTokensButTheThinkMarkers) {
  const auto tokenizer = text::Tokenizer::from_file(std::filesystem::path(GLMRT_FIXTURES) /
                                                    "glm_tiny" / "tokenizer.json");
  const auto ids = tokenizer.encode("a<|system|>b</think>c[MASK]<think>d", false);
  const std::vector<int32_t> tokens(ids.begin(), ids.end());
  EXPECT_EQ(answer_text(tokenizer, tokens), "ab</think>c<think>d");

  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TextStream stream(tokenizer, out);
  for (int32_t token : tokens) stream.push(token);
  stream.finish();
  std::rewind(out);
  std::string printed(64, '\0');
  printed.resize(std::fread(printed.data(), 1, printed.size(), out));
  std::fclose(out);
  EXPECT_EQ(printed, "ab</think>c<think>d");
}

}  // namespace
}  // namespace glmrt::cli
