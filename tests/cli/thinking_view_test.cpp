// How `glmrt chat` prints a reasoning answer: the reasoning apart (faint on a
// terminal), the answer after one blank line, and no <think> tags, however
// the text is cut into pieces.
#include "thinking_view.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace glmrt::cli {
namespace {

std::string shown(bool dim, bool starts_in_reasoning, const std::vector<std::string>& pieces,
                  bool finish = true) {
  std::FILE* out = std::tmpfile();
  EXPECT_NE(out, nullptr);
  ThinkingView view(out, dim, starts_in_reasoning);
  for (const std::string& piece : pieces) view.push(piece);
  if (finish) view.finish();
  std::fflush(out);
  std::rewind(out);
  std::string printed(4096, '\0');
  printed.resize(std::fread(printed.data(), 1, printed.size(), out));
  std::fclose(out);
  return printed;
}

TEST(ThinkingView, ReasoningIsSetApartFromTheAnswerWithoutItsTags) {
  EXPECT_EQ(shown(false, true, {"Let me", " think.</th", "ink>\n\nHello", "!"}),
            "Let me think.\n\nHello!");
  EXPECT_EQ(shown(false, true, {"Step one.\n", "</think>", "\n", "Done"}), "Step one.\n\nDone");
  // A model that opens <think> again, as the prompt did already.
  EXPECT_EQ(shown(false, true, {"<think>why</think>Because"}), "why\n\nBecause");
}

TEST(ThinkingView, AnEmptyReasoningLeavesNoBareTag) {
  EXPECT_EQ(shown(false, true, {"</think>", "Hello"}), "Hello");
  EXPECT_EQ(shown(false, true, {"</thi", "nk>Hello"}), "Hello");
}

TEST(ThinkingView, OnATerminalTheReasoningIsFaintAndTheStyleEndsWithIt) {
  EXPECT_EQ(shown(true, true, {"hmm", "</think>Yes"}), "\x1b[2mhmm\x1b[22m\n\nYes");
  // Stopped (Ctrl-C, token limit) inside the reasoning: the style still ends.
  EXPECT_EQ(shown(true, true, {"still thinking</th"}), "\x1b[2mstill thinking</th\x1b[22m");
}

TEST(ThinkingView, WithoutReasoningTheTextIsPrintedAsItIs) {
  EXPECT_EQ(shown(true, false, {"Hello", " world\n"}), "Hello world\n");
}

}  // namespace
}  // namespace glmrt::cli
