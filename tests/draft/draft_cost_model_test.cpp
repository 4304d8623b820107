// The cost model's choice on synthetic measurements: long drafts when they
// are accepted and cheap, none when they are rejected or when the extra
// experts they pull from disk cost more than they save, the length where
// acceptance falls off, probes while drafting does not pay, and a fixed
// length when the profile turns adaptation off.
#include <glmrt/base/error.h>
#include <glmrt/draft/draft_cost_model.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace glmrt {
namespace {

constexpr int64_t kExperts = 100;  // E0: distinct experts of one position

DraftPolicy adaptive(int max_tokens = 4, int min_tokens = 1) {
  return {max_tokens, min_tokens, true};
}

/// A synthetic machine: compute c0 + c1 k, each draft brings `extra` new
/// experts, a share `miss_rate` of all experts is read at `read` seconds each.
struct Machine {
  double c0 = 1.0, c1 = 0.06;
  double extra = 30, miss_rate = 0.0, read = 0.0;
  VerifyMeasurement step(int k, int accepted) const {
    VerifyMeasurement m;
    m.drafts = k;
    m.accepted = accepted;
    m.experts = kExperts + static_cast<int64_t>(extra * k);
    m.misses = static_cast<int64_t>(miss_rate * static_cast<double>(m.experts));
    m.read_seconds = static_cast<double>(m.misses) * read;
    m.seconds = c0 + c1 * k + m.read_seconds;
    return m;
  }
};

/// Feeds `steps` steps at varied lengths, draft j accepted (given j-1 was)
/// in a deterministic pattern at rate acceptance[j].
void feed(DraftCostModel& model, const Machine& machine, const std::vector<double>& acceptance,
          int steps = 200) {
  for (int s = 0; s < steps; ++s) {
    const int k = 1 + s % static_cast<int>(acceptance.size());
    int accepted = 0;
    while (accepted < k) {
      // Accept draft j on a fixed fraction of steps: s scrambled into [0, 1).
      const double u = std::fmod(0.6180339887 * (s * 7 + accepted * 13 + 1), 1.0);
      if (u >= acceptance[accepted]) break;
      ++accepted;
    }
    model.record_verification(machine.step(k, accepted));
  }
}

TEST(DraftCostModel, AcceptedCheapDraftsGoToTheLongestLength) {
  DraftCostModel model(adaptive(), kExperts);
  feed(model, Machine{}, {0.9, 0.9, 0.9, 0.9});
  EXPECT_EQ(model.best(4), 4);
  EXPECT_EQ(model.best(2), 2);  // capped by what the step may still decide
  const DraftCostEstimate e = model.estimate();
  EXPECT_NEAR(e.acceptance[0], 0.9, 0.08);
  EXPECT_NEAR(e.compute_base, 1.0, 1e-6);
  EXPECT_NEAR(e.compute_per_draft, 0.06, 1e-6);
  EXPECT_NEAR(e.experts_per_draft, 30, 1e-6);
}

TEST(DraftCostModel, NoisyTimesNeverMakeExtraPositionsFree) {
  // Steps with more drafts measured faster (noise): the fitted slope is
  // negative, so the floor of 5% of a step per position applies, and a
  // drafter accepted 3% of the time stays unused.
  DraftCostModel model(adaptive(), kExperts);
  Machine noisy;
  noisy.c1 = -0.1;
  feed(model, noisy, {0.03, 0.03, 0.03, 0.03});
  const DraftCostEstimate e = model.estimate();
  EXPECT_NEAR(e.compute_per_draft, 0.05 * e.compute_base, 1e-9);
  EXPECT_EQ(model.best(4), 0);
}

TEST(DraftCostModel, NeverAcceptedDraftsAreNotWorthVerifying) {
  DraftCostModel model(adaptive(), kExperts);
  feed(model, Machine{}, {0.0, 0.0, 0.0, 0.0});
  EXPECT_EQ(model.best(4), 0);
}

TEST(DraftCostModel, ExtraExpertReadsUnderStreamingCanMakeDraftingSlower) {
  // One draft in five accepted: worth it while the extra experts are cached...
  const std::vector<double> acceptance = {0.2, 0.2, 0.2, 0.2};
  DraftCostModel cached(adaptive(), kExperts);
  feed(cached, Machine{}, acceptance);
  EXPECT_GT(cached.best(4), 0);
  // ... not when half of every position's experts come off the disk.
  Machine streaming;
  streaming.miss_rate = 0.5;
  streaming.read = 0.05;
  DraftCostModel streamed(adaptive(), kExperts);
  feed(streamed, streaming, acceptance);
  EXPECT_EQ(streamed.best(4), 0);
  const DraftCostEstimate e = streamed.estimate();
  EXPECT_NEAR(e.miss_rate, 0.5, 0.02);
  EXPECT_NEAR(e.read_seconds_per_miss, 0.05, 1e-9);
  EXPECT_LT(e.tokens_per_second(1), e.tokens_per_second(0));
}

TEST(DraftCostModel, StopsWhereAcceptanceFallsOff) {
  DraftCostModel model(adaptive(), kExperts);
  Machine machine;
  machine.c1 = 0.15;
  feed(model, machine, {0.95, 0.05, 0.05, 0.05}, 400);
  EXPECT_EQ(model.best(4), 1);
}

TEST(DraftCostModel, TheDrafterOwnTimeCounts) {
  const std::vector<double> acceptance = {0.5, 0.5, 0.5, 0.5};
  DraftCostModel free_drafts(adaptive(), kExperts), slow_drafts(adaptive(), kExperts);
  feed(free_drafts, Machine{}, acceptance);
  feed(slow_drafts, Machine{}, acceptance);
  for (int i = 0; i < 50; ++i) slow_drafts.record_drafting({4, 4, 4.0});  // 1 s a draft
  EXPECT_GT(free_drafts.best(4), 0);
  EXPECT_EQ(slow_drafts.best(4), 0);
  EXPECT_NEAR(slow_drafts.estimate().drafting_per_draft, 1.0, 1e-9);
}

TEST(DraftCostModel, RespectsTheMinimumLength) {
  DraftCostModel model(adaptive(4, 2), kExperts);
  Machine machine;
  machine.c1 = 0.15;
  feed(model, machine, {0.95, 0.05, 0.05, 0.05}, 400);
  const int k = model.best(4);
  EXPECT_TRUE(k == 0 || k >= 2) << k;
  EXPECT_EQ(model.best(1), 0);  // a step that may decide one more token cannot verify 2
  EXPECT_THROW(DraftCostModel(adaptive(2, 3), kExperts), Error);
}

TEST(DraftCostModel, ProbesLessAndLessOftenWhileDraftingDoesNotPay) {
  DraftCostModel model(adaptive(), kExperts);
  feed(model, Machine{}, {0.0, 0.0, 0.0, 0.0});
  std::vector<int> probe_steps;
  for (int step = 1; step <= 8 + 16 + 32; ++step)
    if (model.choose(4) > 0) probe_steps.push_back(step);
  EXPECT_EQ(probe_steps, (std::vector<int>{8, 24, 56}));
  EXPECT_EQ(model.probes(), 3);
  EXPECT_EQ(model.chosen()[0], 8 + 16 + 32 - 3);
}

TEST(DraftCostModel, ProbesThatCostAStepWaitLonger) {
  // Each draft doubles a step (its experts come off the disk) and is never
  // accepted: a probe may take at most 2% of the time, so it waits 50 steps.
  DraftCostModel model(adaptive(), kExperts);
  Machine streaming;
  streaming.extra = 100, streaming.miss_rate = 1.0, streaming.read = 0.0;
  streaming.c1 = 1.0;
  feed(model, streaming, {0.0, 0.0, 0.0, 0.0});
  int first_probe = 0;
  for (int step = 1; step <= 200 && first_probe == 0; ++step)
    if (model.choose(4) > 0) first_probe = step;
  EXPECT_GE(first_probe, 45);
  EXPECT_LE(first_probe, 55);
}

TEST(DraftCostModel, MeasuresNoneAndTheShortestFirstAndFixedPolicyNeverAdapts) {
  DraftCostModel model(adaptive(4, 2), kExperts);
  // Nothing measured yet: a plain step, then (drafts look cheap without
  // streaming) one at the shortest length.
  EXPECT_EQ(model.choose(4), 0);
  model.record_verification(Machine{}.step(0, 0));
  EXPECT_EQ(model.choose(4), 2);
  DraftCostModel fixed({3, 1, false}, kExperts);
  feed(fixed, Machine{}, {0.0, 0.0, 0.0});
  EXPECT_EQ(fixed.choose(8), 3);
  EXPECT_EQ(fixed.choose(2), 2);
  EXPECT_EQ(fixed.chosen()[3], 1);
}

TEST(DraftCostModel, UnderStreamingAShortAnswerIsNeverSlowedByAProbe) {
  // A small cache: nearly every expert comes off the disk, reads are 3/4 of a
  // plain step and an extra position brings 80% of a position's experts
  // again. Nothing says drafts would be accepted: the priors alone must keep
  // the model from spending a step on measuring, for 32 tokens and beyond.
  Machine streaming;
  streaming.c0 = 0.25, streaming.c1 = 0.05;
  streaming.extra = 0.8 * kExperts, streaming.miss_rate = 0.95, streaming.read = 0.008;
  for (int64_t drafter_experts : {0, 8}) {
    DraftCostModel model(adaptive(), kExperts, drafter_experts);
    std::vector<int> chosen;
    for (int step = 0; step < 32; ++step) {
      const int k = model.choose(4);
      chosen.push_back(k);
      model.record_verification(streaming.step(k, 0));
    }
    EXPECT_EQ(chosen, std::vector<int>(32, 0)) << drafter_experts << " drafter experts";
    // The probe comes, but only once it costs at most 2% of the decode time.
    int first_probe = 0;
    for (int step = 32; step < 400 && first_probe == 0; ++step) {
      const int k = model.choose(4);
      if (k > 0) first_probe = step;
      model.record_verification(streaming.step(k, 0));
    }
    const DraftCostEstimate e = model.estimate();
    const double probe_share = e.seconds(1) / e.seconds(0) - 1.0;
    EXPECT_GE(first_probe, static_cast<int>(probe_share / 0.02) - 1) << drafter_experts;
    EXPECT_GT(first_probe, 0) << drafter_experts;
  }
}

TEST(DraftCostModel, TheDrafterExpertsCountBeforeItEverRan) {
  // Measured plain steps only: draft-mtp's own reads (its layer's top-k at the
  // measured miss rate and read time) stand for its time until it runs.
  Machine streaming;
  streaming.miss_rate = 0.5, streaming.read = 0.01;
  DraftCostModel mtp(adaptive(), kExperts, 8), ngram(adaptive(), kExperts, 0);
  for (int s = 0; s < 5; ++s) {
    mtp.record_verification(streaming.step(0, 0));
    ngram.record_verification(streaming.step(0, 0));
  }
  EXPECT_NEAR(mtp.estimate().drafting_per_draft, 8 * 0.5 * 0.01, 1e-9);
  EXPECT_EQ(ngram.estimate().drafting_per_draft, 0.0);
  mtp.record_drafting({1, 1, 0.5});
  EXPECT_NEAR(mtp.estimate().drafting_per_draft, 0.5, 1e-9);  // measured from now on
}

TEST(DraftCostModel, WhereDraftingLooksCheapTheSecondStepDrafts) {
  // Everything in RAM: the priors (acceptance 1/2, an extra position 20% of a
  // step) make drafting pay, so the second step measures it at once.
  DraftCostModel model(adaptive(), kExperts, 8);
  EXPECT_EQ(model.choose(4), 0);
  model.record_verification(Machine{}.step(0, 0));
  EXPECT_EQ(model.choose(4), 1);
}

TEST(DraftCostModel, GrowsOnePositionPastWhatWasMeasured) {
  DraftCostModel model(adaptive(), kExperts);
  for (int s = 0; s < 50; ++s) model.record_verification(Machine{}.step(s % 2, s % 2));
  EXPECT_EQ(model.best(4), 2);  // position 1 always accepted; 2 never tried
  for (int s = 0; s < 50; ++s) model.record_verification(Machine{}.step(2, 2));
  EXPECT_EQ(model.best(4), 3);
}

TEST(DraftCostModel, AnUntriedPositionIsExpectedToDoAsThePreviousOne) {
  // Position 1 always accepted, position 2 never tried: 2 is expected to do
  // about as well (not 1/2), so a drafter that is always right is tried one
  // position deeper at once, under streaming too.
  DraftCostModel model(adaptive(), kExperts);
  Machine streaming;
  streaming.miss_rate = 0.5, streaming.read = 0.01;
  for (int s = 0; s < 40; ++s) model.record_verification(streaming.step(s % 2, s % 2));
  const DraftCostEstimate e = model.estimate();
  EXPECT_GT(e.acceptance[0], 0.9);
  EXPECT_NEAR(e.acceptance[1], e.acceptance[0], 1e-12);
  EXPECT_NEAR(e.acceptance[3], e.acceptance[0], 1e-12);
  EXPECT_EQ(model.best(4), 2);
  // Measured evidence replaces the prior: position 2 never accepted.
  for (int s = 0; s < 40; ++s) model.record_verification(streaming.step(2, 1));
  EXPECT_LT(model.estimate().acceptance[1], 0.1);
  EXPECT_LT(model.estimate().acceptance[2], 0.1);  // and what follows it
  EXPECT_EQ(model.best(4), 1);
}

TEST(DraftCostModel, UnverifiedDraftsJudgedOnTheStepsRowMeasureAcceptance) {
  // Only plain steps, but their unverified first drafts would have been
  // accepted 90% of the time: draft 1 is measured and drafting pays.
  DraftCostModel model(adaptive(), kExperts);
  for (int s = 0; s < 100; ++s) {
    model.record_verification(Machine{}.step(0, 0));
    model.record_shadow(s % 10 == 0 ? 0.0 : 1.0);
  }
  EXPECT_NEAR(model.estimate().acceptance[0], 0.9, 0.05);
  EXPECT_EQ(model.best(4), 2);  // one position past the one measured
  DraftCostModel never(adaptive(), kExperts);
  for (int s = 0; s < 100; ++s) {
    never.record_verification(Machine{}.step(0, 0));
    never.record_shadow(0.0);
  }
  EXPECT_EQ(never.best(4), 0);
}

TEST(DraftCostModel, NeighbouringLengthsAreTriedNowAndThen) {
  DraftCostModel model(adaptive(), kExperts);
  Machine machine;
  machine.c1 = 0.15;
  feed(model, machine, {0.95, 0.05, 0.05, 0.05}, 400);
  int other = 0;
  for (int step = 0; step < 64; ++step) other += model.choose(4) != 1;
  // Every 16th decision alternates one longer and one shorter; shorter than
  // the minimum is no other length.
  EXPECT_EQ(other, 2);
}

}  // namespace
}  // namespace glmrt
