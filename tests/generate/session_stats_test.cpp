// One answer's share of a session's running totals, as `glmrt chat` reports
// it after each answer and `glmrt serve` publishes it as the last request's.
#include <glmrt/generate/session.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

TEST(SessionStatsSince, CountsOnlyTheWorkBetweenTheSnapshots) {
  // prefilled, reused, decoded tokens; prefill, decode seconds
  const SessionStats before{10, 2, 3, 0.5, 1.0};
  const SessionStats now{15, 6, 10, 0.75, 3.0};
  const SessionStats d = session_stats_since(now, before);
  EXPECT_EQ(d.prefilled_tokens, 5);
  EXPECT_EQ(d.reused_tokens, 4);
  EXPECT_EQ(d.decoded_tokens, 7);
  EXPECT_DOUBLE_EQ(d.prefill_seconds, 0.25);
  EXPECT_DOUBLE_EQ(d.decode_seconds, 2.0);
}

TEST(SessionStatsSince, TheSameSnapshotTwiceIsNoWork) {
  const SessionStats s{8, 1, 9, 0.5, 4.0};
  const SessionStats d = session_stats_since(s, s);
  EXPECT_EQ(d.prefilled_tokens + d.reused_tokens + d.decoded_tokens, 0);
  EXPECT_EQ(d.prefill_seconds + d.decode_seconds, 0.0);
}

}  // namespace
}  // namespace glmrt
