#include "bench_run.h"

#include "machine_speeds.h"
#include "step_bytes.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/base/page_cache.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/safetensors.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

namespace glmrt::cli {
namespace {

// What `--limits` reads of the drive: 2 GiB (a second or so at NVMe speeds,
// enough to pass the drive's own cache).
constexpr uint64_t kDriveReadBytes = uint64_t{2} << 30;

void evict_file(const std::filesystem::path& file) {
  if (std::string problem = evict_from_page_cache(file); !problem.empty())
    std::fprintf(stderr, "glmrt bench: cannot evict %s\n", problem.c_str());
}

}  // namespace

void evict_model(const std::filesystem::path& model) {
  // A GGUF model (its file, a shard or its folder): every shard.
  if (is_gguf_model(model)) {
    for (const std::filesystem::path& shard : gguf::model_file_paths(model)) evict_file(shard);
    return;
  }
  for (const auto& entry : std::filesystem::directory_iterator(model))
    if (entry.is_regular_file()) evict_file(entry.path());
}

double BenchRun::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? prefill_tokens / prefill_seconds : 0;
}
double BenchRun::substitutions_per_token() const {
  if (cache_bias <= 0) return -1;
  return cache_bias_rows > 0
             ? static_cast<double>(cache_bias_substitutions) / static_cast<double>(cache_bias_rows)
             : 0.0;
}

double BenchRun::decode_tokens_per_second() const {
  return decode_seconds > 0 ? decode_tokens / decode_seconds : 0;
}
double BenchRun::step_fresh_slot_bytes() const {
  // The same steps the step split divides by: decode tokens alone, forwards in parallel.
  const int64_t steps = streams > 0 ? decode_steps : decode_tokens;
  return steps > 0 ? static_cast<double>(decode_fresh_slot_bytes) / static_cast<double>(steps)
                   : 0.0;
}
double BenchRun::tokens_per_forward() const {
  if (!drafting) return 1.0;
  return draft_forwards > 0 ? double(draft_decided) / double(draft_forwards) : 0.0;
}
double BenchRun::draft_acceptance() const {
  return draft_proposed > 0 ? double(draft_accepted) / double(draft_proposed) : 0.0;
}
double BenchRun::disk_gb_per_second() const {
  return disk_busy_seconds > 0 ? bytes_read / disk_busy_seconds / 1e9 : 0;
}

double BenchRun::drive_limit_tokens_per_second() const {
  if (drive_gb_per_second <= 0 || step_missed_bytes <= 0) return -1;
  return drive_gb_per_second * 1e9 / step_missed_bytes;
}
double BenchRun::memory_limit_tokens_per_second() const {
  if (memory_gb_per_second <= 0 || step_touched_bytes <= 0) return -1;
  return memory_gb_per_second * 1e9 / step_touched_bytes;
}
double BenchRun::of_drive_limit() const {
  const double limit = drive_limit_tokens_per_second();
  return limit > 0 ? decode_tokens_per_second() / limit : -1;
}
double BenchRun::of_memory_limit() const {
  const double limit = memory_limit_tokens_per_second();
  return limit > 0 ? decode_tokens_per_second() / limit : -1;
}

double BenchRun::all_ranks_read_gb_per_second() const {
  return decode_seconds > 0 ? decode_bytes_all_ranks / decode_seconds / 1e9 : 0;
}

namespace {

/// `after` - `before`, rank by rank.
std::vector<cluster::Counters> counters_between(const std::vector<cluster::Counters>& before,
                                                const std::vector<cluster::Counters>& after) {
  std::vector<cluster::Counters> delta = after;
  for (size_t i = 0; i < delta.size() && i < before.size(); ++i) {
    delta[i].lookups -= before[i].lookups;
    delta[i].pinned_hits -= before[i].pinned_hits;
    delta[i].hits -= before[i].hits;
    delta[i].misses -= before[i].misses;
    delta[i].bytes_read -= before[i].bytes_read;
    delta[i].wait_seconds -= before[i].wait_seconds;
    delta[i].busy_seconds -= before[i].busy_seconds;
    delta[i].reads_ahead -= before[i].reads_ahead;
    delta[i].reads_ahead_used -= before[i].reads_ahead_used;
    delta[i].bytes_ahead_wasted -= before[i].bytes_ahead_wasted;
  }
  return delta;
}

uint64_t bytes_of(const std::vector<cluster::Counters>& counters) {
  uint64_t bytes = 0;
  for (const cluster::Counters& c : counters) bytes += c.bytes_read;
  return bytes;
}

double exchange_seconds(const ShardedExperts* shards) {
  return shards ? shards->times().send_seconds + shards->times().wait_seconds : 0.0;
}

double exchange_overhead_seconds(const ShardedExperts* shards) {
  return shards ? shards->times().overhead_seconds : 0.0;
}

}  // namespace

std::string BenchRun::pinning() const {
  if (pinned_experts == 0) return "off";
  return fmt::format("on ({} experts, {})", pinned_experts, format_byte_size(pinned_bytes));
}

void take_expert_figures(BenchRun& run, Engine& engine, const ExpertStoreStats& before,
                         const ExpertStoreStats& after_prefill) {
  const ExpertStoreStats& e = engine.experts().stats();
  run.bytes_read = e.bytes_read - before.bytes_read;
  run.disk_busy_seconds = e.busy_seconds - before.busy_seconds;
  run.pinned_experts = engine.experts().pinned().experts;
  run.pinned_bytes = engine.experts().pinned().bytes;
  run.pinned_hits = e.pinned_hits - before.pinned_hits;
  run.lru_hits = e.hits - before.hits;
  run.misses = e.misses - before.misses;
  run.decode_misses = e.misses - after_prefill.misses;
  run.urgent_reads = e.urgent_reads - before.urgent_reads;
  run.cancelled_reads = e.cancelled_reads - before.cancelled_reads;
  run.cancelled_bytes = e.cancelled_bytes - before.cancelled_bytes;
  run.decode_fresh_slot_bytes = e.fresh_slot_bytes - after_prefill.fresh_slot_bytes;
  run.warmed_slot_bytes = e.warmed_slot_bytes;
  const uint64_t hits = run.pinned_hits + run.lru_hits, uses = hits + run.misses;
  run.hit_rate = uses ? static_cast<double>(hits) / static_cast<double>(uses) : 0.0;
  const auto fraction = [](uint64_t part, uint64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : -1.0;
  };
  run.prefetch_accuracy =
      fraction(e.predicted_used - before.predicted_used, e.predicted - before.predicted);
  run.first_guess_accuracy = fraction(e.first_guesses_used - before.first_guesses_used,
                                      e.first_guesses - before.first_guesses);
  run.next_step_accuracy = fraction(e.next_step_predicted_used - before.next_step_predicted_used,
                                    e.next_step_predicted - before.next_step_predicted);
  const uint64_t gaps = e.step_gaps - after_prefill.step_gaps;
  run.idle_between_steps_ms =
      gaps ? 1e3 * (e.idle_between_steps_seconds - after_prefill.idle_between_steps_seconds) /
                 static_cast<double>(gaps)
           : -1;
}

BenchRun run_bench_once(const Profile& profile, const std::filesystem::path& model,
                        std::span<const int32_t> prompt, int new_tokens, BenchStart start,
                        const Ranks& ranks) {
  BenchRun run;
  if (start.limits) {
    run.drive_gb_per_second = measure_drive_read_gb_per_second(model, kDriveReadBytes);
    run.memory_gb_per_second =
        measure_memory_read_gb_per_second(start.memory_read_bytes, effective_threads(profile));
  }
  if (start.evict) evict_model(model);
  reset_peak_rss();
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = ranks.open(profile, model);
  const auto shards = ranks.spread(*engine);
  run.load_seconds = seconds_since(t0);
  run.ranks = ranks.count();

  SamplingParams greedy;
  greedy.temperature = 0;
  greedy.max_new_tokens = new_tokens;
  if (start.warmup) {
    Sampler sampler(greedy);
    Session session(*engine);
    generate(session, sampler, prompt, {new_tokens, {}}, [](int32_t) { return true; });
  }
  // The counters as they stand before the timed generation, and as its
  // prefill left them (what the decode steps alone cost).
  const ExpertStoreStats before = engine->experts().stats();
  const std::vector<cluster::Counters> ranks_before = rank_counters(*engine, shards.get());
  std::vector<cluster::Counters> ranks_after_prefill = ranks_before;
  double exchange_after_prefill = exchange_seconds(shards.get());
  double overhead_after_prefill = exchange_overhead_seconds(shards.get());
  ExpertStoreStats after_prefill = before;
  StepTimes times_after_prefill = engine->model().step_times();
  bool prefilled = false;
  const CacheBiasRouting bias_before = engine->model().cache_bias();
  Sampler sampler(greedy);
  Session session(*engine);
  const Generation generation = generate(session, sampler, prompt, {new_tokens, {}}, [&](int32_t) {
    if (!prefilled) {
      after_prefill = engine->experts().stats();
      times_after_prefill = engine->model().step_times();
      ranks_after_prefill = rank_counters(*engine, shards.get());
      exchange_after_prefill = exchange_seconds(shards.get());
      overhead_after_prefill = exchange_overhead_seconds(shards.get());
      prefilled = true;
    }
    return true;
  });
  run.tokens = generation.tokens;
  if (const Speculator* speculator = session.speculator()) {
    const DraftStats& d = speculator->stats();
    run.drafting = true;
    run.draft_forwards = d.forwards;
    run.draft_proposed = d.proposed;
    run.draft_accepted = d.accepted;
    run.draft_decided = d.decided;
    run.draft_probes = d.probes;
  }

  const SessionStats& s = session.stats();
  run.prefill_tokens = s.prefilled_tokens;
  run.prefill_seconds = s.prefill_seconds;
  run.decode_tokens = s.decoded_tokens;
  run.decode_seconds = s.decode_seconds;
  const ExpertStoreStats& e = engine->experts().stats();
  take_expert_figures(run, *engine, before, after_prefill);
  const CacheBiasRouting& bias = engine->model().cache_bias();
  run.cache_bias = bias.bias;
  run.cache_bias_rows = bias.rows - bias_before.rows;
  run.cache_bias_substitutions = bias.substitutions - bias_before.substitutions;
  if (run.decode_tokens > 0) {
    const StepTimes& t = engine->model().step_times();
    const double steps = static_cast<double>(run.decode_tokens);
    run.step_disk_wait = (e.wait_seconds - after_prefill.wait_seconds) / steps;
    run.step_expert_matmuls = (t.experts - times_after_prefill.experts) / steps;
    run.step_attention = (t.attention - times_after_prefill.attention) / steps;
    // Reads during decode: misses, and reads ahead (used or wasted).
    const uint64_t misses = e.misses - after_prefill.misses;
    const uint64_t reads = misses + (e.prefetch_reads - after_prefill.prefetch_reads);
    const uint64_t needed = misses + (e.prefetch_reads_used - after_prefill.prefetch_reads_used);
    const double decode_bytes = static_cast<double>(e.bytes_read - after_prefill.bytes_read);
    run.step_missed_bytes =
        reads ? decode_bytes * static_cast<double>(needed) / static_cast<double>(reads) / steps
              : 0.0;
    const double lookups = static_cast<double>(e.lookups() - after_prefill.lookups());
    run.step_touched_bytes =
        static_cast<double>(resident_bytes_per_decode_step(profile, engine->model_dir())) +
        lookups * static_cast<double>(engine->experts().largest_slot_bytes()) / steps;
  }
  const std::vector<cluster::Counters> ranks_after = rank_counters(*engine, shards.get());
  run.rank_experts = counters_between(ranks_before, ranks_after);
  run.decode_bytes_all_ranks = bytes_of(ranks_after) - bytes_of(ranks_after_prefill);
  if (run.decode_tokens > 0) {
    const double steps = static_cast<double>(run.decode_tokens);
    run.step_exchange = (exchange_seconds(shards.get()) - exchange_after_prefill) / steps;
    run.step_exchange_overhead =
        (exchange_overhead_seconds(shards.get()) - overhead_after_prefill) / steps;
    // The rest of a step; waiting for other ranks is the exchange's (0 alone).
    run.step_other =
        std::max(0.0, run.decode_seconds / steps - run.step_disk_wait - run.step_expert_matmuls -
                          run.step_attention - run.step_exchange);
  }
  run.peak_rss_bytes = peak_rss_since_reset_bytes();
  return run;
}

}  // namespace glmrt::cli
