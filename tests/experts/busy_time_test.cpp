// The drive's busy time is the union of the reads' in-flight intervals, added
// in whatever order the host learns how they ended.
#include <glmrt/experts/busy_time.h>
#include <glmrt/experts/drive_idle_gaps.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

using std::chrono::milliseconds;

class BusyTimeTest : public ::testing::Test {
 protected:
  // A read is submitted now or later, never earlier: intervals an hour ahead
  // stay open to every later one.
  BusyTime::Clock::time_point at(int ms) const { return origin_ + milliseconds(ms); }
  void read(int from, int to) {
    busy_.submitted(at(from));
    busy_.landed(at(from), at(to));
  }
  BusyTime::Clock::time_point origin_ = BusyTime::Clock::now() + std::chrono::hours(1);
  BusyTime busy_;
};

TEST_F(BusyTimeTest, OverlappingReadsCountOnce) {
  busy_.submitted(at(0));
  busy_.submitted(at(10));
  busy_.submitted(at(100));
  busy_.landed(at(10), at(30));  // lands before the older read it overlaps
  EXPECT_NEAR(busy_.seconds(), 0.020, 1e-9);
  busy_.landed(at(0), at(20));
  EXPECT_NEAR(busy_.seconds(), 0.030, 1e-9);
  busy_.landed(at(100), at(150));
  EXPECT_NEAR(busy_.seconds(), 0.080, 1e-9);
}

TEST_F(BusyTimeTest, AReadSpanningSeveralBusyStretchesFillsTheGapsBetweenThem) {
  busy_.submitted(at(0));
  read(10, 20);
  read(40, 50);
  read(70, 80);
  EXPECT_NEAR(busy_.seconds(), 0.030, 1e-9);
  busy_.landed(at(0), at(60));  // covers the first two and the gap after the second
  EXPECT_NEAR(busy_.seconds(), 0.070, 1e-9);
  read(75, 90);
  EXPECT_NEAR(busy_.seconds(), 0.080, 1e-9);
  read(90, 90);  // landed at once: nothing to add
  EXPECT_NEAR(busy_.seconds(), 0.080, 1e-9);
}

// Reads that landed before everything still in flight began are forgotten
// (nothing later can overlap them); their time stays counted.
TEST_F(BusyTimeTest, SettledReadsAreForgottenButStayCounted) {
  origin_ = BusyTime::Clock::now() - std::chrono::seconds(10);
  read(0, 5);
  busy_.submitted(at(100));
  read(200, 202);
  read(201, 204);  // overlaps the one before: that one is still held
  busy_.landed(at(100), at(150));
  read(1000, 1003);  // after a quiet spell
  EXPECT_NEAR(busy_.seconds(), 0.005 + 0.050 + 0.004 + 0.003, 1e-9);
}

// The drive's idle gap between steps: from the latest landing when the last
// MoE layer has its experts, to the next step's first submit.
TEST(DriveIdleGaps, AGapRunsFromTheLastLandingToTheNextStepsFirstRead) {
  const auto t0 = DriveIdleGaps::Clock::time_point{} + std::chrono::hours(1);
  DriveIdleGaps gaps;
  gaps.submitted(t0, true);  // no step ended yet: no gap
  gaps.landed(t0 + milliseconds(4));
  gaps.landed(t0 + milliseconds(3));  // learned late, landed earlier
  gaps.step_reads_done(false);
  gaps.submitted(t0 + milliseconds(10), true);
  gaps.submitted(t0 + milliseconds(11), true);  // the gap closed at the first
  EXPECT_EQ(gaps.gaps(), 1u);
  EXPECT_NEAR(gaps.idle_seconds(), 0.006, 1e-9);
}

TEST(DriveIdleGaps, ReadsForTheNextStepAlreadySubmittedOrInFlightLeaveNoGap) {
  const auto t0 = DriveIdleGaps::Clock::time_point{} + std::chrono::hours(1);
  DriveIdleGaps gaps;
  gaps.landed(t0);
  gaps.step_reads_done(true);                  // the next step's guesses went first
  gaps.submitted(t0 + milliseconds(5), true);  // nothing open: not a gap
  gaps.step_reads_done(false);
  gaps.submitted(t0 + milliseconds(9), false);  // a read was still in flight
  EXPECT_EQ(gaps.gaps(), 2u);
  EXPECT_EQ(gaps.idle_seconds(), 0.0);
}

}  // namespace
}  // namespace glmrt
