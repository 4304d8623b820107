// A failed expert read (EIO, a short read the plugin reports, a short read it
// hides) stops the step with an error naming file, offset and expert, caches
// nothing of the batch, and leaves the session able to run the same step
// again with results identical to a clean run. Latency changes only timing.
#include <glmrt/base/error.h>
#include <glmrt/generate/session.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/weights/row_packing.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "checkpoint_generator.h"
#include "fault_profiles.h"

namespace glmrt {
namespace {

using test::EngineSpec;
using test::kTinyModel;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<int32_t> kPrompt = {3, 141, 59, 265, 358, 979, 323, 846, 264, 338, 327, 950};
constexpr int32_t kNext[] = {288, 419};

std::string error_of(const std::function<void()>& step) {
  try {
    step();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// "FILE at offset N": how the store names an extent.
std::string place(const TensorDirectory& tensors, const ExpertExtent& e) {
  return tensors.files().at(e.file).string() + " at offset " + std::to_string(e.offset);
}

void expect_same(const Expert& a, const Expert& b) {
  const glmrt_weight_view* left[] = {&a.gate, &a.up, &a.down};
  const glmrt_weight_view* right[] = {&b.gate, &b.up, &b.down};
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(left[k]->rows, right[k]->rows);
    ASSERT_EQ(left[k]->cols, right[k]->cols);
    std::vector<float> x(left[k]->cols), y(right[k]->cols);
    for (int64_t r = 0; r < left[k]->rows; ++r) {
      unpack_row(*left[k], r, x);
      unpack_row(*right[k], r, y);
      ASSERT_EQ(x, y) << "matrix " << k << " row " << r;
    }
  }
}

class ExpertReadFaultTest : public ::testing::Test {
 protected:
  ExpertReadFaultTest()
      : tensors_(TensorDirectory::open(kTinyModel)), config_(load_model_config(kTinyModel)) {}

  std::unique_ptr<Engine> open(const std::string& name, EngineSpec spec = {}) {
    return test::open_engine(scratch_.path(), name, spec);
  }
  /// The extents of these experts of `layer`, in the order the store reads them.
  std::vector<ExpertExtent> extents_of(int layer, std::span<const int32_t> ids) const {
    const auto layouts = plan_expert_layouts(config_, tensors_, config_.num_hidden_layers);
    std::vector<ExpertExtent> out;
    for (int32_t id : ids)
      for (const ExpertExtent& e : layouts.at(layer).at(id).extents) out.push_back(e);
    return out;
  }
  /// After a failure: nothing was cached, the next acquire reads every expert
  /// again and gets what a clean store gets.
  void expect_clean_retry(Engine& engine, int layer, std::span<const int32_t> ids) {
    const ExpertStoreStats failed = engine.experts().stats();
    EXPECT_EQ(failed.hits, 0u);
    EXPECT_EQ(failed.extents_read, 0u);
    const auto experts = engine.experts().acquire(layer, ids);
    const ExpertStoreStats retried = engine.experts().stats();
    EXPECT_EQ(retried.hits, 0u) << "a failed expert was left in the cache";
    EXPECT_EQ(retried.misses, failed.misses + ids.size());
    EXPECT_EQ(retried.extents_read, extents_of(layer, ids).size());
    auto clean = open("clean", test::clean_spec());
    const auto expected = clean->experts().acquire(layer, ids);
    for (size_t k = 0; k < ids.size(); ++k) expect_same(experts[k], expected[k]);
  }

  test::ScratchDir scratch_{"glmrt-expert-faults"};
  TensorDirectory tensors_;
  ModelConfig config_;
};

TEST_F(ExpertReadFaultTest, EioNamesFileOffsetAndExpertsAndCachesNothing) {
  auto engine = open("eio", test::fault_spec({{"eio_at", "2"}}));
  const int32_t ids[] = {3, 7};
  const auto extents = extents_of(1, ids);
  ASSERT_GE(extents.size(), 2u);
  EXPECT_THAT(
      error_of([&] { engine->experts().acquire(1, ids); }),
      AllOf(HasSubstr("2 routed experts of layer 1"), HasSubstr("model.layers.1.mlp.experts.3"),
            HasSubstr("model.layers.1.mlp.experts.7"), HasSubstr(place(tensors_, extents[1])),
            HasSubstr(std::strerror(EIO)), HasSubstr("read #2")));
  expect_clean_retry(*engine, 1, ids);
}

TEST_F(ExpertReadFaultTest, ReportedShortReadStopsTheStep) {
  auto engine = open("short", test::fault_spec({{"short_read_at", "1"}}));
  const int32_t ids[] = {5};
  const auto extents = extents_of(2, ids);
  EXPECT_THAT(error_of([&] { engine->experts().acquire(2, ids); }),
              AllOf(HasSubstr("short read of " + place(tensors_, extents[0])),
                    HasSubstr("model.layers.2.mlp.experts.5")));
  expect_clean_retry(*engine, 2, ids);
}

class UnreportedShortRead : public ExpertReadFaultTest,
                            public ::testing::WithParamInterface<bool> {};

// ABI 1.1: the read's byte count gives the shortfall away. ABI 1.0 has no
// count: the mark the host wrote over the end of the read is still there.
TEST_P(UnreportedShortRead, IsCaughtByTheHost) {
  const bool abi_1_0 = GetParam();
  auto engine =
      open("lying",
           test::fault_spec({{"short_read_at", "2"}, {"short_reads_reported", "false"}}, abi_1_0));
  EXPECT_EQ(engine->io_info().abi_minor, abi_1_0 ? 0 : GLMRT_ABI_MINOR);
  const int32_t ids[] = {0, 9, 15};
  const auto extents = extents_of(3, ids);
  ASSERT_GE(extents.size(), 2u);
  const std::string message = error_of([&] { engine->experts().acquire(3, ids); });
  EXPECT_THAT(message,
              AllOf(HasSubstr("reported success"), HasSubstr("model.layers.3.mlp.experts.9"),
                    HasSubstr("short read it did not report")));
  if (abi_1_0)
    EXPECT_THAT(message, HasSubstr("left the end of " + place(tensors_, extents[1])));
  else
    EXPECT_THAT(message, AllOf(HasSubstr("read only " + std::to_string(extents[1].length / 2) +
                                         " of " + std::to_string(extents[1].length)),
                               HasSubstr(place(tensors_, extents[1]))));
  expect_clean_retry(*engine, 3, ids);
}

INSTANTIATE_TEST_SUITE_P(Abi, UnreportedShortRead, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "abi_1_0" : "abi_1_1"; });

/// Logits of a clean run (io-buffered): prefill, then two decode steps, and
/// how many extents had been read after the prefill and after the first step.
struct CleanRun {
  std::vector<float> prefill, step1, step2;
  uint64_t reads_after_prefill = 0, reads_after_step1 = 0;
};

class SessionAfterFaultTest : public ExpertReadFaultTest {
 protected:
  void SetUp() override {
    auto engine = open("clean", test::clean_spec());
    Session session(*engine);
    clean_.prefill = session.set_context(kPrompt);
    clean_.reads_after_prefill = engine->experts().stats().extents_read;
    clean_.step1 = session.append(kNext[0]);
    clean_.reads_after_step1 = engine->experts().stats().extents_read;
    clean_.step2 = session.append(kNext[1]);
    ASSERT_GE(clean_.reads_after_prefill, 2u);
    ASSERT_GT(clean_.reads_after_step1, clean_.reads_after_prefill)
        << "the decode step must read experts for these tests to mean anything";
  }
  static EngineSpec eio_at(uint64_t read) {
    return test::fault_spec({{"eio_at", std::to_string(read)}});
  }
  /// The session continues exactly as the clean run did.
  void expect_continues_cleanly(Session& session) {
    EXPECT_EQ(session.append(kNext[0]), clean_.step1);
    EXPECT_EQ(session.append(kNext[1]), clean_.step2);
  }

  CleanRun clean_;
};

TEST_F(SessionAfterFaultTest, FailedPrefillCanBeRunAgain) {
  auto engine = open("eio", eio_at(clean_.reads_after_prefill / 2 + 1));
  Session session(*engine);
  EXPECT_THAT(error_of([&] { session.set_context(kPrompt); }),
              AllOf(HasSubstr("routed experts of layer"), HasSubstr(".safetensors at offset"),
                    HasSubstr(std::strerror(EIO))));
  EXPECT_TRUE(session.tokens().empty());
  EXPECT_EQ(session.set_context(kPrompt), clean_.prefill);
  expect_continues_cleanly(session);
}

class FailedDecodeStep : public SessionAfterFaultTest,
                         public ::testing::WithParamInterface<bool> {};

TEST_P(FailedDecodeStep, LeavesTheSequenceAsItWas) {
  // The first read of the step fails (its first MoE layer that misses), or
  // the last one (its last), after every earlier layer appended its KV rows.
  const bool first = GetParam();
  auto engine =
      open("eio", eio_at(first ? clean_.reads_after_prefill + 1 : clean_.reads_after_step1));
  Session session(*engine);
  EXPECT_EQ(session.set_context(kPrompt), clean_.prefill);
  EXPECT_THAT(error_of([&] { session.append(kNext[0]); }), HasSubstr(std::strerror(EIO)));
  EXPECT_EQ(session.tokens(), kPrompt);
  expect_continues_cleanly(session);
}

INSTANTIATE_TEST_SUITE_P(FirstOrLastRead, FailedDecodeStep, ::testing::Bool());

TEST_F(SessionAfterFaultTest, ModelForwardRewindsTheCacheWhenAReadFails) {
  auto engine = open("eio", eio_at(clean_.reads_after_prefill + 1));
  KvCache cache = engine->new_cache();
  engine->model().forward(cache, kPrompt);
  const std::vector<int64_t> after_prompt = cache.lengths();
  EXPECT_EQ(after_prompt.front(), static_cast<int64_t>(kPrompt.size()));
  EXPECT_THAT(error_of([&] { engine->model().forward(cache, std::span(kNext, 1)); }),
              HasSubstr(std::strerror(EIO)));
  EXPECT_EQ(cache.lengths(), after_prompt);
  engine->model().forward(cache, std::span(kNext, 1));
  EXPECT_EQ(cache.lengths().front(), static_cast<int64_t>(kPrompt.size()) + 1);
}

TEST_F(SessionAfterFaultTest, LatencyChangesTimingNotResults) {
  constexpr double kLatency = 0.003;
  auto engine = open("slow", test::fault_spec({{"latency_ms", "3"}}));
  Session session(*engine);
  EXPECT_EQ(session.set_context(kPrompt), clean_.prefill);
  expect_continues_cleanly(session);
  const ExpertStoreStats& stats = engine->experts().stats();
  EXPECT_GT(stats.extents_read, clean_.reads_after_step1);
  EXPECT_GE(stats.read_seconds, static_cast<double>(stats.extents_read) * kLatency);
}

}  // namespace
}  // namespace glmrt
