// The lines `run` and `chat` print about drafting: a rate of nothing (no
// draft proposed, none judged at a position) is left out, never shown as 0%;
// the counts keep the form bench/draft/drafting.py parses.
#include <glmrt/draft/draft_stats.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace glmrt {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DraftReport, RatesOfNothingAreLeftOut) {
  DraftStats s;
  s.drafter = "draft-mtp";
  s.forwards = 19;
  s.decided = 21;
  s.requested = 54;
  s.proposed = 8;
  s.accepted = 2;
  s.judged_at = {8, 0, 0};
  s.accepted_at = {2, 0, 0};
  const std::vector<std::string> lines = describe_draft_stats(s);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("8 proposed, 2 accepted (25.0%)"));
  EXPECT_EQ(lines[1],
            "draft acceptance by position: 1: 2/8 (25.0%) 2: 0/0 (none judged) 3: 0/0 (none "
            "judged)");
  s.proposed = s.accepted = 0;
  s.judged_at = {0};
  s.accepted_at = {0};
  const std::vector<std::string> idle = describe_draft_stats(s);
  EXPECT_THAT(idle[0], HasSubstr("0 proposed, 0 accepted (none proposed)"));
  EXPECT_THAT(idle[0] + idle[1], Not(HasSubstr("0.0%")));
}

}  // namespace
}  // namespace glmrt
