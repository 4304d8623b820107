// Reading ahead: a guess never takes the slot of an expert the LRU part
// holds (one of the last memory.expert_cache used), so a wrong guess costs
// its read and never a hit; what is read ahead and wasted is counted; the
// prediction is measured when nothing is read ahead; `prefetch: auto`
// reads a rank ahead only while measured accuracy and costs say it pays.
#include <glmrt/generate/session.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;

const fs::path kReadAheadTiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";

std::unique_ptr<Engine> open_read_ahead_engine(const fs::path& scratch, int cache,
                                               const std::string& prefetch,
                                               const std::string& experts = "f32") {
  const fs::path file = scratch / fmt::format("read-ahead-{}-{}-{}.yaml", cache, prefetch, experts);
  std::ofstream(file) << fmt::format(
      "plugins: {{kernels: kernels-scalar, io: io-buffered}}\n"
      "threads: 2\n"
      "precision: {{dense: f32, experts: {}, kv_cache: f32}}\n"
      "memory: {{expert_cache: {}, prefetch: {}, max_context: 256, pinned: 0, history: off}}\n",
      experts, cache, prefetch);
  Profile profile = load_profile(file);
  profile.plugin_paths.insert(profile.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return Engine::open(profile, kReadAheadTiny);
}

class ReadAhead : public ::testing::Test {
 protected:
  test::ScratchDir scratch_{"glmrt-read-ahead"};
};

// Two LRU slots and two read-ahead slots: expert 0 is used, two guesses are
// read, expert 3 is used, two more guesses come. Plain LRU order would give
// them expert 0's slot (the guesses 1 and 2 are more recent than it); the
// guesses take the unused guesses' slots instead, and 0 is still a hit.
TEST_F(ReadAhead, AWrongGuessNeverEvictsARecentlyUsedExpert) {
  auto engine = open_read_ahead_engine(scratch_.path(), 2, "2");
  ExpertStore& store = engine->experts();
  const int32_t zero[] = {0}, three[] = {3}, first_guess[] = {1, 2}, second_guess[] = {4, 5};
  { const auto held = store.acquire(2, zero); }
  store.prefetch(2, first_guess);
  // The guesses land before expert 3's step: its miss is urgent (ABI 1.6)
  // and would otherwise overtake them, leaving them in flight, so that the
  // second guesses find no slot to take.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  { const auto held = store.acquire(2, three); }
  store.prefetch(2, second_guess);
  const ExpertStoreStats before = store.stats();
  EXPECT_EQ(before.prefetch_reads, 4u);
  EXPECT_EQ(before.misses, 2u);
  { const auto held = store.acquire(2, zero); }
  const ExpertStoreStats after = store.stats();
  EXPECT_EQ(after.misses, before.misses) << "expert 0 was evicted by a guess and read again";
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.displaced_rereads, 0u);
  // The first two guesses were dropped unused: their bytes are wasted.
  EXPECT_GT(after.prefetch_bytes, 0u);
  EXPECT_EQ(after.prefetch_bytes_wasted * 2, after.prefetch_bytes);
  // Four predictions, none used by the steps after them.
  EXPECT_EQ(after.predicted, 4u);
  EXPECT_EQ(after.predicted_used, 0u);
}

// A step that needs more than the LRU part holds still gets every expert:
// the protection only keeps guesses away, never the step's own misses.
TEST_F(ReadAhead, AStepStillTakesAnySlotItNeeds) {
  auto engine = open_read_ahead_engine(scratch_.path(), 2, "2");
  ExpertStore& store = engine->experts();
  const int32_t used[] = {0, 1}, guess[] = {2, 3}, next[] = {4, 5, 6, 7};
  { const auto held = store.acquire(2, used); }
  store.prefetch(2, guess);
  { const auto held = store.acquire(2, next); }
  EXPECT_EQ(store.stats().misses, 6u);
  EXPECT_EQ(store.stats().prefetch_reads_used, 0u);
}

// glm_tiny's f32 experts under int4 are converted: read ahead into staging
// buffers of their own (budgeted), converted when a step uses them, and
// equal to the expert a step reads and converts itself.
TEST_F(ReadAhead, ExpertsThatNeedConvertingAreReadAheadToo) {
  auto engine = open_read_ahead_engine(scratch_.path(), 2, "2", "int4");
  ExpertStore& store = engine->experts();
  const int32_t guess[] = {1, 2}, one[] = {1};
  store.prefetch(2, guess);
  EXPECT_EQ(store.stats().prefetch_reads, 2u);
  const auto held = store.acquire(2, one);
  EXPECT_EQ(store.stats().misses, 0u);
  EXPECT_EQ(store.stats().hits, 1u);
  EXPECT_EQ(store.stats().prefetch_reads_used, 1u);
  auto plain = open_read_ahead_engine(scratch_.path(), 2, "0", "int4");
  const auto expected = plain->experts().acquire(2, one);
  EXPECT_EQ(plain->experts().stats().misses, 1u);
  for (auto matrix : {&Expert::gate, &Expert::up, &Expert::down}) {
    const glmrt_weight_view& got = held[0].*matrix;
    const glmrt_weight_view& want = expected[0].*matrix;
    ASSERT_EQ(got.rows, want.rows);
    EXPECT_EQ(
        std::memcmp(got.data, want.data, static_cast<size_t>(got.rows * got.row_stride_bytes)), 0);
    EXPECT_EQ(std::memcmp(got.scales, want.scales, static_cast<size_t>(got.rows) * sizeof(float)),
              0);
  }
  // The read-ahead buffers are charged beside the step's one.
  EXPECT_GT(engine->budget().by_category().at("expert staging"),
            plain->budget().by_category().at("expert staging"));
}

// A step's own misses on experts that need converting take free read-ahead
// staging buffers: read side by side (and before the next layer's guesses),
// converted on arrival, equal to the ones read one by one through the
// step's staging buffer, and counted as misses, not as reads ahead.
TEST_F(ReadAhead, ConvertedMissesAreReadSideBySide) {
  auto engine = open_read_ahead_engine(scratch_.path(), 2, "2", "int4");
  ExpertStore& store = engine->experts();
  const int32_t two[] = {1, 2};
  const auto held = store.acquire(2, two);
  EXPECT_EQ(store.stats().misses, 2u);
  EXPECT_EQ(store.stats().prefetch_reads, 0u);
  EXPECT_EQ(store.stats().prefetch_bytes, 0u);
  EXPECT_EQ(store.stats().prefetch_bytes_wasted, 0u);
  auto plain = open_read_ahead_engine(scratch_.path(), 2, "0", "int4");
  const auto expected = plain->experts().acquire(2, two);
  for (size_t k = 0; k < 2; ++k)
    for (auto matrix : {&Expert::gate, &Expert::up, &Expert::down}) {
      const glmrt_weight_view& got = held[k].*matrix;
      const glmrt_weight_view& want = expected[k].*matrix;
      ASSERT_EQ(got.rows, want.rows);
      EXPECT_EQ(
          std::memcmp(got.data, want.data, static_cast<size_t>(got.rows * got.row_stride_bytes)),
          0);
    }
  // Both read-ahead buffers were taken (by the two misses).
  EXPECT_GT(engine->budget().by_category().at("expert staging"),
            plain->budget().by_category().at("expert staging"));
}

// A guess that needs converting waits in its buffer until a step uses it,
// but the drive is not busy meanwhile: the next reap (each prediction, each
// step) ends its busy time, so the drive's rate and busy share the
// read-ahead depth is priced by do not count that wait as reading.
TEST_F(ReadAhead, ALandedGuessWaitingToBeConvertedLeavesTheDriveIdle) {
  auto engine = open_read_ahead_engine(scratch_.path(), 2, "2", "int4");
  ExpertStore& store = engine->experts();
  const int32_t guess[] = {1, 2}, one[] = {1};
  store.prefetch(2, guess);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the reads land
  store.prefetch(2, guess);  // reaps: both are there, their busy time ends
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto held = store.acquire(2, one);
  EXPECT_EQ(store.stats().prefetch_reads_used, 1u);
  EXPECT_EQ(store.stats().prefetch_reads_late, 0u);
  // Busy until the reap (the 50 ms: a reap is when the store looks), not
  // through the 300 ms the guess then waited for its step.
  EXPECT_LT(store.stats().busy_seconds, 0.25) << "busy until the step converted it";
}

TEST(ReadAheadCosts, TheBusyShareLeavesOutTheStepsWaits) {
  EXPECT_DOUBLE_EQ(busy_while_computing(0.3, 0, 1), 0.3);
  // Half the time waiting (busy), 0.1 s of reads while computing: 0.1 of 0.5.
  EXPECT_DOUBLE_EQ(busy_while_computing(0.6, 0.5, 1), 0.2);
  EXPECT_EQ(busy_while_computing(0.5, 0.5, 0.5), -1) << "nothing but waiting";
  EXPECT_EQ(busy_while_computing(0.2, 0.3, 1), 0) << "clamped";
}

TEST_F(ReadAhead, PredictionIsMeasuredWithNothingReadAhead) {
  auto engine = open_read_ahead_engine(scratch_.path(), 4, "0");
  Session session(*engine);
  session.set_context(std::vector<int32_t>{3, 141, 59, 265});
  for (int32_t token : {288, 419, 716}) session.append(token);
  const ExpertStoreStats& s = engine->experts().stats();
  EXPECT_GT(s.predicted, 0u);
  EXPECT_GT(s.predicted_used, 0u);
  EXPECT_EQ(s.prefetch_reads, 0u);
  EXPECT_EQ(s.prefetch_bytes, 0u);
}

ReadAheadCosts one_second_reads() {
  ReadAheadCosts c;
  c.read_seconds = 1;
  return c;
}

TEST(ReadAheadDepth, AutoReadsARankOnlyWhileItsGuessesPay) {
  ReadAheadDepth depth(3, 2, /*automatic=*/true);
  depth.choose(1, one_second_reads());
  EXPECT_FALSE(depth.reads(1, 0)) << "an unmeasured rank is a coin toss: not worth a read";
  for (int i = 0; i < 40; ++i) {
    depth.observe(1, 0, /*absent=*/true, /*used=*/true);
    depth.observe(1, 1, /*absent=*/true, /*used=*/false);
  }
  depth.choose(1, one_second_reads());
  EXPECT_TRUE(depth.reads(1, 0));
  EXPECT_FALSE(depth.reads(1, 1));
  EXPECT_FALSE(depth.reads(1, 5)) << "ranks past the slots are judged as the last";
  // A right guess that lands late saves half a read; a wrong one that
  // displaces a re-read costs two: rank 0 (right ~97%) still pays.
  ReadAheadCosts costly = one_second_reads();
  costly.on_time = 0;
  costly.displaced = 1;
  depth.choose(1, costly);
  EXPECT_TRUE(depth.reads(1, 0));
  // A drive busy all the time: a right guess saves nothing, a wrong one
  // delays a needed read.
  ReadAheadCosts saturated = one_second_reads();
  saturated.drive_busy = 1;
  depth.choose(1, saturated);
  EXPECT_FALSE(depth.reads(1, 0));
  // An idle drive and nothing else to pay: a guess costs only its bytes, so
  // even the mostly wrong rank is read.
  ReadAheadCosts idle = one_second_reads();
  idle.drive_busy = 0;
  depth.choose(1, idle);
  EXPECT_TRUE(depth.reads(1, 0));
  EXPECT_TRUE(depth.reads(1, 1));
  // Conversion far dearer than a read: no guess pays.
  costly.finish_seconds = 1000;
  depth.choose(1, costly);
  EXPECT_FALSE(depth.reads(1, 0));
  // Guesses found in memory cost nothing and teach nothing.
  for (int i = 0; i < 200; ++i) depth.observe(2, 0, /*absent=*/false, /*used=*/false);
  depth.choose(2, one_second_reads());
  EXPECT_FALSE(depth.reads(2, 0));
  const auto chosen = depth.chosen();
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].layer, 1u);
  EXPECT_DOUBLE_EQ(chosen[0].mean_depth, 4.0 / 6);  // 0, 1, 1, 0, 2, 0 ranks
}

TEST(ReadAheadDepth, AFixedDepthReadsItsRanksAlways) {
  ReadAheadDepth depth(2, 3, /*automatic=*/false);
  depth.choose(0, one_second_reads());
  for (int i = 0; i < 100; ++i) depth.observe(0, 0, true, false);
  EXPECT_TRUE(depth.reads(0, 0));
  EXPECT_TRUE(depth.reads(0, 2));
  EXPECT_FALSE(depth.reads(0, 3));
  ReadAheadDepth off(2, 0, /*automatic=*/true);
  off.choose(0, one_second_reads());
  EXPECT_FALSE(off.reads(0, 0));
}

TEST(ReadAheadCosts, ComeFromTheStoresCounters) {
  ExpertStoreStats s;
  EXPECT_EQ(read_ahead_costs(s, 0).read_seconds, 0);
  s.misses = 3;
  s.prefetch_reads = 1;
  s.bytes_read = 4000;
  s.prefetch_reads_used = 4;
  s.prefetch_reads_late = 1;
  s.ahead_finished = 2;
  s.ahead_finish_seconds = 0.5;
  s.displaced_rereads = 3;
  const ReadAheadCosts c = read_ahead_costs(s, 1000);
  EXPECT_DOUBLE_EQ(c.read_seconds, 1.0);  // 1000 bytes per expert at 1000 bytes/s
  EXPECT_DOUBLE_EQ(c.finish_seconds, 0.25);
  EXPECT_DOUBLE_EQ(c.on_time, 0.75);
  // Per guess read (1 here), not per wasted guess (none: every guess was
  // used), which would be unbounded and stop reading ahead for good.
  EXPECT_DOUBLE_EQ(c.displaced, 3.0);
  s.prefetch_reads = 6;
  EXPECT_DOUBLE_EQ(read_ahead_costs(s, 1000).displaced, 0.5);
}

// A second prediction for a layer before it runs refines the first: the
// refined one is the accuracy, the first guesses are counted apart.
TEST_F(ReadAhead, ARefinedPredictionIsMeasuredAndItsFirstGuessApart) {
  auto engine = open_read_ahead_engine(scratch_.path(), 4, "2");
  ExpertStore& store = engine->experts();
  const int32_t first[] = {1, 2}, refined[] = {3, 4}, used[] = {1, 3};
  store.prefetch(2, first);
  store.prefetch(2, refined);
  { const auto held = store.acquire(2, used); }
  const ExpertStoreStats& s = store.stats();
  EXPECT_EQ(s.predicted, 2u);
  EXPECT_EQ(s.predicted_used, 1u);
  EXPECT_EQ(s.first_guesses, 2u);
  EXPECT_EQ(s.first_guesses_used, 1u);
  EXPECT_EQ(s.next_step_predicted, 0u);
}

TEST_F(ReadAhead, TheNextStepsGuessIsMeasuredApart) {
  auto engine = open_read_ahead_engine(scratch_.path(), 4, "2");
  ExpertStore& store = engine->experts();
  const int32_t guess[] = {0, 5}, used[] = {0, 6};
  store.prefetch_next_step(1, guess);
  { const auto held = store.acquire(1, used); }
  const ExpertStoreStats& s = store.stats();
  EXPECT_EQ(s.next_step_predicted, 2u);
  EXPECT_EQ(s.next_step_predicted_used, 1u);
  EXPECT_EQ(s.predicted, 0u);
}

// Decoding: every step guesses the next step's first MoE layer and refines
// each layer's guess, the drive's gaps between steps are counted, and the
// tokens are those of a run that reads nothing ahead.
TEST_F(ReadAhead, DecodingGuessesTheNextStepAndCountsTheDrivesGaps) {
  std::vector<std::vector<float>> logits;
  for (const char* prefetch : {"2", "0"}) {
    auto engine = open_read_ahead_engine(scratch_.path(), 2, prefetch);
    Session session(*engine);
    session.set_context(std::vector<int32_t>{3, 141, 59, 265});
    std::vector<float> last;
    for (int32_t token : {288, 419, 716, 5}) last = session.append(token);
    logits.push_back(last);
    const ExpertStoreStats& s = engine->experts().stats();
    EXPECT_GT(s.first_guesses, 0u) << prefetch;
    EXPECT_GE(s.step_gaps, 4u) << prefetch;
    if (std::string(prefetch) == "0") {
      EXPECT_EQ(s.next_step_predicted, 0u);  // nothing can be read ahead
    } else {
      EXPECT_GE(s.next_step_predicted, 4u);
    }
  }
  EXPECT_EQ(logits[0], logits[1]);
}

}  // namespace
}  // namespace glmrt
