// How `glmrt chat` cuts its input into messages from a pipe: one line each,
// unless a line ends in a backslash or a block of lines is fenced by """.
// /stats counts the conversation's messages (a turn is two).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

using ::testing::HasSubstr;

ProcessResult chat_with(const std::string& input) {
  return run_glmrt({"chat", "--profile", reference_profile(), "--model", tiny_model(), "-n", "2",
                    "--no-thinking", "--history-file", ""},
                   Stdout::captured, input);
}

TEST(ChatInput, EveryLineOfAPipeIsAMessage) {
  const ProcessResult r = chat_with("hello\nagain\n/stats\n");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("conversation: 4 messages")) << r.err;
}

TEST(ChatInput, ALineEndingInABackslashGoesOnOnTheNextLine) {
  const ProcessResult r = chat_with("first line\\\nsecond line\n/stats\n");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("conversation: 2 messages")) << r.err;
  // A doubled backslash is a backslash that ends the message.
  const ProcessResult doubled = chat_with("path C:\\\\\n/stats\n");
  ASSERT_EQ(doubled.exit_status, 0) << doubled.err;
  EXPECT_THAT(doubled.err, HasSubstr("conversation: 2 messages")) << doubled.err;
}

TEST(ChatInput, TripleQuotesFenceABlockOfLinesAsOneMessage) {
  const ProcessResult r = chat_with("\"\"\"\nline one\n\n/stats is text here\n\"\"\"\n/stats\n");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("conversation: 2 messages")) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("no answer yet"))) << r.err;
}

}  // namespace
}  // namespace glmrt::test
