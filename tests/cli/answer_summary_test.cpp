// The one line `glmrt chat` prints after an answer, and the expert counters
// of one answer it and /stats are made from: a figure that does not apply is
// left out, never shown as 0% (or as 100% of nothing read).
#include "answer_summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace glmrt::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ExpertStoreStats lookups(uint64_t pinned, uint64_t slot_hits, uint64_t misses) {
  ExpertStoreStats s;
  s.pinned_hits = pinned;
  s.hits = slot_hits;
  s.misses = misses;
  return s;
}

TEST(AnswerSummary, GivesTokensPerSecondAndTheHitRateWhenExpertsWereRead) {
  const SessionStats session{12, 0, 20, 0.1, 0.5};
  EXPECT_EQ(answer_summary(21, session, lookups(10, 60, 30)),
            "(21 tokens, 40.0 tokens/s, expert hit rate 70.0%)");
}

TEST(AnswerSummary, LeavesTheHitRateOutWhenEveryExpertWasPinned) {
  const SessionStats session{12, 0, 20, 0.1, 0.5};
  const std::string line = answer_summary(21, session, lookups(400, 0, 0));
  EXPECT_EQ(line, "(21 tokens, 40.0 tokens/s)");
  EXPECT_EQ(answer_summary(21, session, lookups(0, 0, 0)), line);
}

TEST(AnswerSummary, LeavesTokensPerSecondOutWhenNothingWasDecoded) {
  const std::string line = answer_summary(1, SessionStats{12, 0, 0, 0.1, 0.0}, lookups(0, 0, 8));
  EXPECT_EQ(line, "(1 token, expert hit rate 0.0%)");
  EXPECT_THAT(line, Not(HasSubstr("tokens/s")));
}

TEST(ExpertStatsSince, CountsOneAnswersWorkAndKeepsTheAllocatedSlots) {
  ExpertStoreStats before = lookups(5, 7, 9);
  before.bytes_read = 100;
  before.predicted = 10;
  before.predicted_used = 4;
  before.wait_seconds = 1.5;
  before.slots_allocated = 3;
  ExpertStoreStats now = lookups(6, 10, 19);
  now.bytes_read = 250;
  now.predicted = 10;
  now.predicted_used = 4;
  now.wait_seconds = 2.0;
  now.slots_allocated = 8;
  const ExpertStoreStats d = expert_stats_since(now, before);
  EXPECT_EQ(d.pinned_hits, 1u);
  EXPECT_EQ(d.hits, 3u);
  EXPECT_EQ(d.misses, 10u);
  EXPECT_EQ(d.lookups(), 14u);
  EXPECT_EQ(d.bytes_read, 150u);
  EXPECT_EQ(d.predicted, 0u);  // nothing predicted in between: no accuracy applies
  EXPECT_DOUBLE_EQ(d.wait_seconds, 0.5);
  EXPECT_EQ(d.slots_allocated, 8u);
  // A snapshot taken before a reset (counters lower now) gives no work, not a wrap.
  EXPECT_EQ(expert_stats_since(before, now).misses, 0u);
}

}  // namespace
}  // namespace glmrt::cli
