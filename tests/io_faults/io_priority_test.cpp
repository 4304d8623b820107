// io ABI 1.6 in the expert store: a step's misses are submitted urgent, a
// guess its layer's router disproved that has not reached the drive gives up
// its slot when a miss needs it (cancelled, its bytes saved and counted), and
// none of it changes a result: with the same plugin declaring ABI 1.4 (the
// host then calls neither) the experts and the logits are the same. The 1.4
// copy still passes the io conformance suite, the 1.6 checks skipped.
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/generate/session.h>
#include <glmrt/weights/row_packing.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checkpoint_generator.h"
#include "fault_profiles.h"

// A namespace of its own: the unity build joins this file with the other
// fault tests, which have a kPrompt and an expect_same of their own.
namespace glmrt::io_priority {
namespace {

using test::EngineSpec;

const std::vector<int32_t> kPrompt = {3, 141, 59, 265, 358, 979, 323, 846, 264, 338, 327, 950};
constexpr int32_t kNext[] = {288, 419};

/// fault-io (ABI 1.6, or its 1.4 copy), every read delayed `latency_ms`
/// on its one reader thread: two LRU slots and two read-ahead slots.
EngineSpec slow_io(bool abi_1_4, int latency_ms) {
  EngineSpec spec;
  spec.io = (abi_1_4 ? test::kFaultIo14Plugin : test::kFaultIoPlugin).string();
  spec.io_settings = {{"latency_ms", std::to_string(latency_ms)}};
  spec.expert_cache = 2;
  spec.prefetch = "2";
  return spec;
}

void expect_same(const Expert& a, const Expert& b) {
  const glmrt_weight_view* left[] = {&a.gate, &a.up, &a.down};
  const glmrt_weight_view* right[] = {&b.gate, &b.up, &b.down};
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(left[k]->rows, right[k]->rows);
    std::vector<float> x(static_cast<size_t>(left[k]->cols)), y(x.size());
    for (int64_t r = 0; r < left[k]->rows; ++r) {
      unpack_row(*left[k], r, x);
      unpack_row(*right[k], r, y);
      ASSERT_EQ(x, y) << "matrix " << k << " row " << r;
    }
  }
}

class IoPriority : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> open(const std::string& name, const EngineSpec& spec) {
    return test::open_engine(scratch_.path(), name, spec);
  }
  test::ScratchDir scratch_{"glmrt-io-priority"};
};

// Guesses 1 and 2 are queued (the first at the drive, 50 ms per read: the
// test thread must reach the step before guess 2 starts, even on a loaded
// machine); a step then needs four other experts in a pool of four slots:
// two go to the empty slots, urgent, ahead of the guesses; the other two
// take the guesses' slots, cancelling what of them has not started.
TEST_F(IoPriority, AMissTakesTheSlotOfADisprovedGuessThatHasNotStarted) {
  const int32_t guess[] = {1, 2}, step[] = {5, 6, 7, 8};
  auto engine = open("urgent", slow_io(false, 50));
  ExpertStore& store = engine->experts();
  store.prefetch(2, guess);
  const auto held = store.acquire(2, step);
  const ExpertStoreStats s = store.stats();
  EXPECT_EQ(s.prefetch_reads, 2u);
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.urgent_reads, 4u);
  EXPECT_GE(s.cancelled_reads, 1u) << "guess 2 was queued behind guess 1 and the misses";
  EXPECT_GT(s.cancelled_bytes, 0u);
  // Only what the drive did read of the guesses is wasted.
  EXPECT_LE(s.prefetch_bytes_wasted + s.cancelled_bytes, s.prefetch_bytes);

  // The same with the plugin declaring 1.4: the step waits for the guesses
  // to land instead, and gets the same experts.
  auto old = open("old", slow_io(true, 50));
  EXPECT_EQ(old->io_info().abi_minor, 4);
  old->experts().prefetch(2, guess);
  const auto expected = old->experts().acquire(2, step);
  const ExpertStoreStats o = old->experts().stats();
  EXPECT_EQ(o.urgent_reads, 0u);
  EXPECT_EQ(o.cancelled_reads, 0u);
  EXPECT_EQ(o.prefetch_bytes_wasted, o.prefetch_bytes);
  for (size_t k = 0; k < std::size(step); ++k) expect_same(held[k], expected[k]);
}

TEST_F(IoPriority, ResultsAreTheSameWithAPluginOfAbi14) {
  std::vector<std::vector<float>> logits[2];
  ExpertStoreStats stats[2];
  for (const bool abi_1_4 : {false, true}) {
    auto engine = open(abi_1_4 ? "abi14" : "abi16", slow_io(abi_1_4, 1));
    Session session(*engine);
    auto& out = logits[abi_1_4 ? 1 : 0];
    out.push_back(session.set_context(kPrompt));
    for (const int32_t token : kNext) out.push_back(session.append(token));
    stats[abi_1_4 ? 1 : 0] = engine->experts().stats();
  }
  EXPECT_EQ(logits[0], logits[1]);
  EXPECT_GT(stats[0].urgent_reads, 0u);
  EXPECT_EQ(stats[0].urgent_reads, stats[0].misses);
  EXPECT_EQ(stats[1].urgent_reads, 0u);
  EXPECT_EQ(stats[1].cancelled_reads, 0u);
}

TEST(FaultIo14, IsServedAndPassesTheConformanceSuiteWithoutThe16Checks) {
  const conformance::CheckReport report = conformance::run_io_conformance(test::kFaultIo14Plugin);
  size_t skipped = 0;
  for (const auto& r : report.results()) {
    if (r.outcome == conformance::Outcome::kSkip) {
      ++skipped;
      EXPECT_NE(r.name.find("ABI 1.6"), std::string::npos) << r.name;
      continue;
    }
    EXPECT_EQ(r.outcome, conformance::Outcome::kPass) << r.name << ": " << r.detail;
  }
  EXPECT_EQ(skipped, 1u);
}

}  // namespace
}  // namespace glmrt::io_priority
