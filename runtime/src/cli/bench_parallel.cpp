// `glmrt bench --parallel N`: N streams decoding together, one forward per
// step, and what sharing the steps saved: the distinct experts a step
// resolved against N times what one stream resolves alone.
#include "bench_run.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/batch_generation.h>
#include <glmrt/generate/speculator.h>

#include <algorithm>
#include <chrono>
#include <functional>

namespace glmrt::cli {

double BenchRun::of_separate_streams() const {
  if (streams <= 0 || one_stream_experts_per_step <= 0) return -1;
  return experts_per_step / (streams * one_stream_experts_per_step);
}

double BenchRun::median_stream_tokens_per_second() const {
  if (streams <= 0 || stream_tokens_per_second.empty()) return -1;
  std::vector<double> v = stream_tokens_per_second;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

struct Streams {
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::unique_ptr<Sampler>> samplers;
};

/// Every prompt as one stream of a batch; each step timed, split into
/// prefill steps (any prompt row) and decode steps (decode rows only).
struct BatchTimes {
  double prefill_seconds = 0, decode_seconds = 0;
  int64_t prefill_rows = 0, decode_rows = 0, decode_steps = 0;
};

BatchTimes run_batch(Engine& engine, std::span<const std::vector<int32_t>> prompts, int new_tokens,
                     Streams& streams, std::vector<Generation>& results,
                     const std::function<void()>& after_prefill_step) {
  SamplingParams greedy;
  greedy.temperature = 0;
  BatchGeneration batch(engine);
  std::vector<int> ids;
  for (const std::vector<int32_t>& prompt : prompts) {
    // Each with the profile's drafter, if any: the batch's plan decides its drafts.
    streams.sessions.push_back(std::make_unique<Session>(engine));
    streams.samplers.push_back(std::make_unique<Sampler>(greedy));
    ids.push_back(
        batch.add(*streams.sessions.back(), *streams.samplers.back(), prompt, {new_tokens, {}}));
  }
  BatchTimes times;
  for (;;) {
    if (!batch.step()) break;
    // The forward's time, as a single stream's session counts its steps.
    const BatchGeneration::StepRows& rows = batch.last_step();
    const double seconds = rows.seconds;
    // A step that runs a prompt chunk counts as prefill, the other streams'
    // tokens in it too: decode figures are the steps of decode rows only
    // (tokens decided: with a drafter, a row may decide several).
    if (rows.prefill > 0) {
      times.prefill_seconds += seconds;
      times.prefill_rows += rows.prefill;
    } else {
      times.decode_seconds += seconds;
      times.decode_rows += rows.decided;
      ++times.decode_steps;
    }
    // The counters as the last prompt step left them: what follows is decode.
    if (rows.prefill > 0 && after_prefill_step) after_prefill_step();
  }
  for (int id : ids) results.push_back(batch.result(id));
  return times;
}

}  // namespace

BenchRun run_bench_parallel(const Profile& profile, const std::filesystem::path& model,
                            std::span<const std::vector<int32_t>> prompts, int new_tokens,
                            BenchStart start) {
  if (prompts.empty()) fail("bench: --parallel needs at least one stream");
  BenchRun run;
  run.streams = static_cast<int>(prompts.size());
  if (start.evict) evict_model(model);
  reset_peak_rss();
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = Engine::open(profile, model);
  run.load_seconds = seconds_since(t0);
  if (start.warmup) {
    Streams warm;
    std::vector<Generation> ignored;
    run_batch(*engine, prompts, new_tokens, warm, ignored, {});
  }
  const ExpertStoreStats before = engine->experts().stats();
  ExpertStoreStats after_prefill = before;
  StepTimes times_after_prefill = engine->model().step_times();
  Streams streams;
  std::vector<Generation> results;
  const BatchTimes t = run_batch(*engine, prompts, new_tokens, streams, results, [&] {
    after_prefill = engine->experts().stats();
    times_after_prefill = engine->model().step_times();
  });
  for (const Generation& g : results)
    run.tokens.insert(run.tokens.end(), g.tokens.begin(), g.tokens.end());
  run.prefill_tokens = t.prefill_rows;
  run.prefill_seconds = t.prefill_seconds;
  run.decode_tokens = t.decode_rows;
  run.decode_seconds = t.decode_seconds;
  run.decode_steps = t.decode_steps;
  for (const auto& session : streams.sessions) {
    // Drafting figures summed over the streams (the batch's plan decided).
    if (const Speculator* speculator = session->speculator()) {
      const DraftStats& d = speculator->stats();
      run.drafting = true;
      run.draft_forwards += d.forwards;
      run.draft_proposed += d.proposed;
      run.draft_accepted += d.accepted;
      run.draft_decided += d.decided;
      run.draft_probes += d.probes;
    }
    const SessionStats& s = session->stats();
    run.stream_tokens_per_second.push_back(
        s.decode_seconds > 0 ? s.decoded_tokens / s.decode_seconds : 0.0);
  }

  const ExpertStoreStats& e = engine->experts().stats();
  take_expert_figures(run, *engine, before, after_prefill);
  // One stream alone resolves, per decode step, each MoE layer's top-k for
  // its one position: experts_per_position() distinct experts.
  run.one_stream_experts_per_step = static_cast<double>(engine->model().experts_per_position());
  if (run.decode_steps > 0) {
    const double steps = static_cast<double>(run.decode_steps);
    const StepTimes& st = engine->model().step_times();
    run.experts_per_step = static_cast<double>(e.lookups() - after_prefill.lookups()) / steps;
    run.step_disk_wait = (e.wait_seconds - after_prefill.wait_seconds) / steps;
    run.step_expert_matmuls = (st.experts - times_after_prefill.experts) / steps;
    run.step_attention = (st.attention - times_after_prefill.attention) / steps;
    run.step_other = std::max(0.0, run.decode_seconds / steps - run.step_disk_wait -
                                       run.step_expert_matmuls - run.step_attention);
  }
  run.peak_rss_bytes = peak_rss_since_reset_bytes();
  return run;
}

}  // namespace glmrt::cli
