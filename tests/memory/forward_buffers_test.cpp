// The forward buffers the plan counts against what a whole-prompt prefill
// really adds to the process (peak RSS since a reset, measured in this
// process), for both MLA forms, and the prefill chunk the plan chooses when
// the whole prompt does not fit the budget.
#include <glmrt/base/memory.h>
#include <glmrt/generate/session.h>
#include <glmrt/memory/forward_buffers.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/memory/memory_plan.h>
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace glmrt {
namespace {

using test_support::kTinyModel;

std::vector<int32_t> prompt(int n) {
  std::vector<int32_t> ids;
  uint32_t x = 777;
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    ids.push_back(static_cast<int32_t>((x >> 10) % 1000));
  }
  return ids;
}

class ForwardBuffers : public ::testing::TestWithParam<AttentionFormChoice> {};

TEST_P(ForwardBuffers, WholePromptPrefillAllocatesNoMoreThanThePlanCounts) {
  Profile profile = test_support::reference_profile();
  profile.history = false;
  profile.threads = 2;
  auto engine = test_support::open_tiny_engine(profile);
  Session session(*engine);
  session.set_prefill_chunk(0);
  engine->model().set_attention_form(GetParam());
  const std::vector<int32_t> ids = prompt(4000);
  const uint64_t before = current_rss_bytes();
  if (!reset_peak_rss()) GTEST_SKIP() << "this system does not reset VmHWM";
  session.set_context(ids);
  const uint64_t grew = peak_rss_since_reset_bytes() - before;
  const ModelConfig& c = engine->model().config();
  const ForwardBufferBytes b = forward_buffer_bytes(c, {4000, profile.max_context, 2, 0, false});
  // The KV cache grows as rows are appended: 4000 of its max_context rows.
  const uint64_t kv = kv_cache_bytes(profile, c) * 4000 / uint64_t(profile.max_context);
  EXPECT_LE(grew, b.moe_block + b.layers + b.logits + kv)
      << "moe " << b.moe_block << " layers " << b.layers << " logits " << b.logits << " kv " << kv;
}

INSTANTIATE_TEST_SUITE_P(BothForms, ForwardBuffers,
                         ::testing::Values(AttentionFormChoice::absorbed,
                                           AttentionFormChoice::reconstructed));

TEST(ForwardBufferBytes, GrowLinearlyWithThePositionsOfACall) {
  const TensorDirectory tensors = TensorDirectory::open(kTinyModel);
  const ModelConfig c = load_model_config(kTinyModel, tensors);
  const auto total = [&](int64_t S) {
    const ForwardBufferBytes b = forward_buffer_bytes(c, {S, 8192, 2, 0, false});
    return b.moe_block + b.layers;
  };
  // Twice the positions, at most twice the bytes (plus what depends on the context alone).
  EXPECT_LE(total(4096), 2 * total(2048));
  EXPECT_GT(total(4096), total(2048));
}

TEST(MemoryPlanPrefill, ChoosesAChunkThatFitsWhenTheWholePromptDoesNot) {
  const TensorDirectory tensors = TensorDirectory::open(kTinyModel);
  const ModelConfig c = load_model_config(kTinyModel, tensors);
  Profile profile = test_support::reference_profile();
  profile.prefill_chunk = 0;
  profile.threads = 2;
  MemoryPlanInputs inputs;
  const MemoryPlan whole =
      plan_memory(profile, resolve_run_settings(profile, c), c, tensors, inputs);
  EXPECT_EQ(whole.prefill_chunk, profile.max_context);
  EXPECT_FALSE(whole.prefill_chunk_from_budget);

  profile.memory_budget_bytes = whole.minimum() - (whole.minimum() / 4);
  profile.pinned_bytes = 0;
  const MemoryPlan chunked =
      plan_memory(profile, resolve_run_settings(profile, c), c, tensors, inputs);
  EXPECT_TRUE(chunked.prefill_chunk_from_budget);
  EXPECT_GE(chunked.prefill_chunk, kSmallestAutoPrefillChunk);
  EXPECT_LT(chunked.prefill_chunk, profile.max_context);
  EXPECT_LE(chunked.total(), chunked.budget);

  // A chunk the profile fixes is kept.
  profile.prefill_chunk = 300;
  EXPECT_EQ(
      plan_memory(profile, resolve_run_settings(profile, c), c, tensors, inputs).prefill_chunk,
      300);
}

}  // namespace
}  // namespace glmrt
