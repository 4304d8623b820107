// Experts streamed through slot pools: the logits never depend on the cache,
// the prefetch or the pool size (a pool smaller than a step's needs streams in
// waves), on the io plugin, or on whether a container is read in place or
// converted; slots are allocated once, budgeted and recycled; prefetch is
// accounted for; a pool the budget cannot hold fails at load.
#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <fstream>

#include "checkpoint_generator.h"
#include "prequantized_tiny.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

const fs::path kTinyCheckpoint = fs::path(GLMRT_FIXTURES) / "glm_tiny";
const std::vector<int32_t> kPrompt = {3, 141, 59, 265, 358, 979, 323, 846, 264, 338, 327, 950};
const std::vector<int32_t> kNext = {288, 419, 716, 939, 937, 510};

struct EngineSetup {
  std::string io = "io-buffered";
  std::string experts = "f32";  // precision.experts
  int cache = 16;
  std::string prefetch = "auto";
  std::string budget = "0";
};

std::unique_ptr<Engine> open_engine(const fs::path& scratch, const fs::path& model,
                                    const EngineSetup& s) {
  static int counter = 0;
  const fs::path file = scratch / fmt::format("profile-{}.yaml", counter++);
  std::ofstream(file) << fmt::format(
      "plugins: {{kernels: kernels-scalar, io: {}}}\n"
      "threads: 2\n"
      "precision: {{dense: f32, experts: {}, kv_cache: f32}}\n"
      // No pinned set: hits and misses are compared across engines, and
      // pinning depends on the usage history other tests left.
      "memory: {{budget: {}, expert_cache: {}, prefetch: {}, max_context: 256, pinned: 0}}\n",
      s.io, s.experts, s.budget, s.cache, s.prefetch);
  Profile profile = load_profile(file);
  profile.plugin_paths.insert(profile.plugin_paths.begin(), fs::path(GLMRT_BUILD_DIR) / "plugins");
  return Engine::open(profile, model);
}

/// The logits of a prefill and of the decode steps after it.
std::vector<std::vector<float>> run_session(Engine& engine) {
  Session session(engine);
  std::vector<std::vector<float>> logits = {session.set_context(kPrompt)};
  for (int32_t token : kNext) logits.push_back(session.append(token));
  return logits;
}

enum class Checkpoint { tiny_f32, container_contiguous, container_seed };

struct StreamCase {
  std::string name;
  Checkpoint checkpoint;
  std::string experts;  // the profile's expert precision
};

void PrintTo(const StreamCase& c, std::ostream* os) {
  *os << c.name;
}

class ExpertStreaming : public ::testing::TestWithParam<StreamCase> {
 protected:
  fs::path model() {
    switch (GetParam().checkpoint) {
      case Checkpoint::tiny_f32:
        return kTinyCheckpoint;
      case Checkpoint::container_contiguous:
      case Checkpoint::container_seed: {
        const fs::path dir = scratch_.path() / "container";
        if (!fs::exists(dir))
          test::write_prequantized_tiny(dir, GLMRT_I4,
                                        GetParam().checkpoint == Checkpoint::container_seed
                                            ? test::ContainerLayout::seed
                                            : test::ContainerLayout::contiguous);
        return dir;
      }
    }
    return {};
  }
  std::unique_ptr<Engine> open(EngineSetup s) {
    s.experts = GetParam().experts;
    return open_engine(scratch_.path(), model(), s);
  }

  test::ScratchDir scratch_{"glmrt-streaming"};
};

TEST_P(ExpertStreaming, LogitsDoNotDependOnCachePrefetchPoolOrPlugin) {
  auto baseline_engine = open({});
  const auto baseline = run_session(*baseline_engine);
  EXPECT_GT(baseline_engine->experts().stats().prefetch_reads +
                baseline_engine->experts().stats().predicted,
            0u);
  const std::vector<EngineSetup> setups = {
      {.prefetch = "0"},                              // prefetch off
      {.cache = 1, .prefetch = "0"},                  // one slot: every step streams
      {.cache = 2, .prefetch = "1"},                  // pools smaller than a step's needs
      {.cache = 0, .prefetch = "3"},                  // only read-ahead slots
      {.io = "io-odirect", .cache = 2},               // O_DIRECT into slots
      {.io = GLMRT_FAULT_IO_1_0_PLUGIN, .cache = 3},  // an ABI 1.0 plugin: read() only
  };
  for (const EngineSetup& s : setups) {
    SCOPED_TRACE(fmt::format("io {} cache {} prefetch {}", s.io, s.cache, s.prefetch));
    auto engine = open(s);
    EXPECT_EQ(run_session(*engine), baseline);
    const ExpertStoreStats& stats = engine->experts().stats();
    if (s.cache + (s.prefetch == "auto" ? 4 : std::stoi(s.prefetch)) < 4) {
      EXPECT_GT(stats.streamed_steps, 0u);
    }
  }
}

// Two copies of the model's files (`mirrors`): every read goes to one or the
// other, the logits stay the same, both copies are read.
TEST_P(ExpertStreaming, AMirroredModelGivesTheSameLogits) {
  const fs::path own = model();
  const fs::path mirror = scratch_.path() / "second-drive" / own.filename();
  fs::create_directories(mirror.parent_path());
  fs::copy(own, mirror, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  auto baseline_engine = open({.cache = 2});
  const auto baseline = run_session(*baseline_engine);
  for (const char* io : {"io-buffered", "io-odirect"}) {
    SCOPED_TRACE(io);
    auto engine = open({.io = fmt::format("{{name: {}, settings: {{threads: 4, mirrors: [{}]}}}}",
                                          io, mirror.string()),
                        .cache = 2});
    EXPECT_EQ(run_session(*engine), baseline);
    EXPECT_GT(engine->experts().stats().misses, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Checkpoints, ExpertStreaming,
    ::testing::Values(StreamCase{"f32_in_place", Checkpoint::tiny_f32, "f32"},
                      StreamCase{"f32_converted_to_int4", Checkpoint::tiny_f32, "int4"},
                      StreamCase{"int4_container", Checkpoint::container_contiguous, "int4"},
                      StreamCase{"int4_seed_container", Checkpoint::container_seed, "int4"}),
    [](const auto& info) { return info.param.name; });

class ExpertSlots : public ::testing::Test {
 protected:
  test::ScratchDir scratch_{"glmrt-slots"};
};

TEST_F(ExpertSlots, AContainerIsReadInPlaceAndEqualsConvertingOnTheFly) {
  for (auto layout : {test::ContainerLayout::contiguous, test::ContainerLayout::seed}) {
    const fs::path dir =
        scratch_.path() / (layout == test::ContainerLayout::seed ? "seed" : "contiguous");
    test::write_prequantized_tiny(dir, GLMRT_I4, layout);
    // No reads ahead, so every read counted is one a step asked for.
    const EngineSetup setup{.experts = "int4", .cache = 4, .prefetch = "0"};
    auto container = open_engine(scratch_.path(), dir, setup);
    auto converting = open_engine(scratch_.path(), kTinyCheckpoint, setup);
    EXPECT_EQ(run_session(*container), run_session(*converting));
    // Read in place: no staging buffer exists, the slots hold the file's bytes.
    const auto in_place = container->budget().by_category();
    EXPECT_FALSE(in_place.contains("expert staging"));
    EXPECT_GT(in_place.at("expert slots"), 0u);
    EXPECT_TRUE(converting->budget().by_category().contains("expert staging"));
    const uint64_t reads_per_expert =
        container->experts().stats().extents_read / container->experts().stats().misses;
    // Seed layout: the matrices in one read, the expert's scales (adjacent
    // among its layer's) in another.
    EXPECT_EQ(reads_per_expert, layout == test::ContainerLayout::seed ? 2u : 1u);
  }
}

TEST_F(ExpertSlots, AreAllocatedOnceBudgetedAndRecycled) {
  auto engine = open_engine(scratch_.path(), kTinyCheckpoint, {.cache = 2, .prefetch = "1"});
  Session session(*engine);
  session.set_context(kPrompt);
  const ExpertStore& store = engine->experts();
  const int moe_layers = 3;
  const uint64_t slot = (store.slot_bytes(1) + 4095) / 4096 * 4096;
  const uint64_t after_prefill = store.stats().slots_allocated;
  EXPECT_EQ(after_prefill, 3u * moe_layers);
  EXPECT_EQ(engine->budget().by_category().at("expert slots"), after_prefill * slot);
  for (int round = 0; round < 3; ++round)
    for (int32_t token : kNext) session.append(token);
  EXPECT_EQ(store.stats().slots_allocated, after_prefill);
  EXPECT_EQ(engine->budget().by_category().at("expert slots"), after_prefill * slot);
  EXPECT_GT(store.stats().misses, 3u * moe_layers);  // slots were recycled for new experts
  EXPECT_GT(store.stats().streamed_steps, 0u);       // 12 positions need more than 3 slots
}

TEST_F(ExpertSlots, UnderABudgetLimitTheSlotsAreFaultedInAtLoadNotInTheSteps) {
  // Zeroing fresh memory beside the steps slowed them (docs/expert-cache.md):
  // the engine is open only once every slot the plan allows is faulted in.
  auto engine = open_engine(scratch_.path(), kTinyCheckpoint,
                            {.cache = 2, .prefetch = "1", .budget = "1GiB"});
  const ExpertStore& store = engine->experts();
  const uint64_t slot = (store.slot_bytes(1) + 4095) / 4096 * 4096;
  const uint64_t warmed = store.stats().warmed_slot_bytes;
  if (warmed == 0) GTEST_SKIP() << "this kernel cannot populate (MADV_POPULATE_WRITE)";
  const auto rows = std::ranges::count(store.expert_rows(), true);  // 3 MoE layers + MTP's
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(warmed, static_cast<uint64_t>(rows) * 3 * slot);  // 2 cached + 1 read ahead each
  // Charged where the memory is: at load, every pool's (the MTP row's too).
  EXPECT_EQ(engine->budget().by_category().at("expert slots"), warmed);
  run_session(*engine);
  EXPECT_EQ(store.stats().warmed_slot_bytes, warmed);
  EXPECT_EQ(store.stats().fresh_slot_bytes, 0u);
  EXPECT_EQ(engine->budget().by_category().at("expert slots"), warmed);
}

TEST_F(ExpertSlots, OneSlotPerLayerStillRunsEveryStep) {
  auto engine = open_engine(scratch_.path(), kTinyCheckpoint, {.cache = 1, .prefetch = "0"});
  run_session(*engine);
  auto roomy = open_engine(scratch_.path(), kTinyCheckpoint, {.prefetch = "0"});
  run_session(*roomy);
  const ExpertStoreStats& one = engine->experts().stats();
  const ExpertStoreStats& many = roomy->experts().stats();
  EXPECT_EQ(one.slots_allocated, 3u);  // one per MoE layer, nothing outside the pool
  EXPECT_EQ(engine->budget().by_category().at("expert slots"),
            3 * ((engine->experts().slot_bytes(1) + 4095) / 4096 * 4096));
  EXPECT_EQ(one.hits + one.misses, many.hits + many.misses);
  EXPECT_EQ(one.streamed_steps, 3u * (1 + kNext.size()));  // every step of every layer
  EXPECT_GT(one.misses, many.misses);
}

TEST_F(ExpertSlots, PoolsTheBudgetCannotHoldFailAtLoadNamingTheArithmetic) {
  try {
    open_engine(scratch_.path(), kTinyCheckpoint, {.cache = 16, .prefetch = "4", .budget = "2MiB"});
    FAIL() << "a 2 MiB budget held 20 slots per layer beside the resident part";
  } catch (const Error& e) {
    // The memory plan refuses it before loading, naming every part.
    EXPECT_THAT(e.what(), AllOf(HasSubstr("memory budget 2 MiB is below the minimum"),
                                HasSubstr("memory.prefetch 4 slots x 4 MoE layers"),
                                HasSubstr("memory.expert_cache fixed: 16 experts x 4 MoE layers"),
                                HasSubstr("Raise memory.budget")));
  }
}

TEST_F(ExpertSlots, PrefetchIsAccountedFor) {
  auto off = open_engine(scratch_.path(), kTinyCheckpoint, {.prefetch = "0"});
  run_session(*off);
  const ExpertStoreStats without = off->experts().stats();
  EXPECT_GT(without.predicted, 0u);  // measured, though nothing is read ahead
  EXPECT_EQ(without.prefetch_reads, 0u);

  auto on = open_engine(scratch_.path(), kTinyCheckpoint, {.cache = 4, .prefetch = "4"});
  run_session(*on);
  const ExpertStoreStats with = on->experts().stats();
  // Every expert a step used was a hit or a miss, whatever was read ahead.
  EXPECT_EQ(with.hits + with.misses, without.hits + without.misses);
  EXPECT_GT(with.predicted, 0u);
  EXPECT_LE(with.predicted_used, with.predicted);
  EXPECT_GT(with.prefetch_reads, 0u);
  EXPECT_LE(with.prefetch_reads_used, with.prefetch_reads);
  EXPECT_GT(with.prediction_accuracy(), 0.3);  // glm_tiny's residual stream carries over
  // Each step predicts the 3 MoE layers (from the layer before each): at most
  // a pool's worth (8) for the 12-position prefill, a token's 4 when decoding.
  EXPECT_LE(with.predicted, 3u * (8 + 6 * 4));
}

TEST_F(ExpertSlots, PerfectPredictionsOnAModelWithHotExperts) {
  // Experts 0..3 of every layer win every position (their correction bias
  // dominates), so each prediction is right and, once read, every use hits.
  nlohmann::json config;
  std::ifstream(kTinyCheckpoint / "config.json") >> config;
  config["num_nextn_predict_layers"] = 0;
  test::TensorList tensors = test::make_checkpoint_tensors({config, 5});
  for (int layer = 1; layer < 4; ++layer) {
    auto* bias = test::find_tensor(
        tensors, fmt::format("model.layers.{}.mlp.gate.e_score_correction_bias", layer));
    ASSERT_NE(bias, nullptr);
    for (int e = 0; e < 4; ++e) bias->values[e] = 100.f;
  }
  test::write_checkpoint(scratch_.path() / "hot", config, tensors, 1);
  auto engine =
      open_engine(scratch_.path(), scratch_.path() / "hot", {.cache = 4, .prefetch = "4"});
  run_session(*engine);
  const ExpertStoreStats& s = engine->experts().stats();
  EXPECT_EQ(s.predicted, 3u * 4 * (1 + kNext.size()));
  EXPECT_EQ(s.predicted_used, s.predicted);
  // Each layer's four are read once, ahead of the step that needs them.
  EXPECT_EQ(s.misses + s.prefetch_reads, 3u * 4);
  EXPECT_GT(s.prefetch_reads, 0u);
  EXPECT_EQ(s.prefetch_reads_used, s.prefetch_reads);
}

TEST_F(ExpertSlots, AFailedReadAheadCostsAReadNotTheStep) {
  // Read #1 fails: it is the read ahead of expert 5; the step that wants
  // expert 5 reads it again (read #2) and gets it.
  const EngineSetup faulty{
      .io = fmt::format("{{name: {}, settings: {{eio_at: 1}}}}", GLMRT_FAULT_IO_PLUGIN),
      .cache = 2,
      .prefetch = "2"};
  auto engine = open_engine(scratch_.path(), kTinyCheckpoint, faulty);
  ExpertStore& store = engine->experts();
  const int32_t five[] = {5};
  store.prefetch(2, five);
  EXPECT_EQ(store.stats().prefetch_reads, 1u);
  const auto held = store.acquire(2, five);
  EXPECT_EQ(store.stats().misses, 1u);
  EXPECT_EQ(store.stats().hits, 0u);
  auto clean = open_engine(scratch_.path(), kTinyCheckpoint, {});
  const auto expected = clean->experts().acquire(2, five);
  EXPECT_EQ(std::memcmp(held[0].down.data, expected[0].down.data,
                        static_cast<size_t>(held[0].down.rows * held[0].down.row_stride_bytes)),
            0);
}

}  // namespace
}  // namespace glmrt
