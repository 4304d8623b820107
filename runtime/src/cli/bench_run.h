// One timed run of `glmrt bench`: load a model under a profile, prefill a
// prompt, decode greedily, and collect what the run cost.
#pragma once

#include "ranks.h"

#include <glmrt/profile/profile.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace glmrt {
class Engine;
struct ExpertStoreStats;
}  // namespace glmrt

namespace glmrt::cli {

struct BenchRun {
  double load_seconds = 0;
  int64_t prefill_tokens = 0, decode_tokens = 0;
  double prefill_seconds = 0, decode_seconds = 0;
  uint64_t bytes_read = 0;       // routed experts, whole run
  double disk_busy_seconds = 0;  // with at least one expert read in flight
  double hit_rate = 0;
  uint64_t pinned_experts = 0;  // 0: pinning was off (memory.pinned: 0, or no history yet)
  uint64_t pinned_bytes = 0;    // what the pinned set holds in RAM
  uint64_t pinned_hits = 0, lru_hits = 0, misses = 0;
  double prefetch_accuracy = -1;  // -1: nothing was predicted
  // The first guesses a refined prediction replaced, and the next step's
  // first MoE layer guessed before the step began (-1: none).
  double first_guess_accuracy = -1, next_step_accuracy = -1;
  // The drive's idle time from a decode step's last expert read to the next
  // step's first, per step (-1: no such gap closed).
  double idle_between_steps_ms = -1;
  uint64_t decode_misses = 0;  // misses of the decode steps alone
  // io ABI 1.6: misses read ahead of queued guesses; guesses given up
  // before they reached the drive, and the bytes they did not read.
  uint64_t urgent_reads = 0, cancelled_reads = 0, cancelled_bytes = 0;
  // Cache-aware routing (routing.cache_bias; 0 = exact): the decode positions
  // it applied in and the experts it substituted there.
  double cache_bias = 0;
  int64_t cache_bias_rows = 0, cache_bias_substitutions = 0;
  /// Substitutions per decode position (-1 with cache_bias off).
  double substitutions_per_token() const;
  uint64_t peak_rss_bytes = 0;
  // Expert slot memory a read had to fault in while decoding (the kernel
  // zeroes it inside the read, on an io thread: time taken from the step),
  // and what the store faulted in ahead, off the steps' path (whole run).
  uint64_t decode_fresh_slot_bytes = 0, warmed_slot_bytes = 0;
  /// decode_fresh_slot_bytes per decode step.
  double step_fresh_slot_bytes() const;
  // Where a decode step's time went, seconds per step.
  double step_disk_wait = 0, step_expert_matmuls = 0, step_attention = 0, step_other = 0;
  // Speculative decoding (all 0 when the profile drafts nothing): decode
  // forwards, drafts verified and accepted, tokens the forwards decided.
  bool drafting = false;
  int64_t draft_forwards = 0, draft_proposed = 0, draft_accepted = 0, draft_decided = 0;
  int64_t draft_probes = 0;
  std::vector<int32_t> tokens;
  // Expert parallelism (ranks 1: one process): each rank's counters over
  // the timed generation, what all ranks read while decoding, and the
  // exchange's time per decode step.
  int ranks = 1;
  std::vector<cluster::Counters> rank_experts;
  uint64_t decode_bytes_all_ranks = 0;
  double step_exchange = 0;           // seconds per decode step, waiting for ranks included
  double step_exchange_overhead = 0;  // of it, what the exchange itself cost (expert_cluster.h)
  /// What all ranks read while decoding, over the decode time.
  double all_ranks_read_gb_per_second() const;

  // What a decode step moved, per step: the routed-expert bytes it had to get
  // from the drive (its misses and the reads ahead it used, not the wasted
  // ones) and the weight bytes it read from memory (the resident weights but
  // the embeddings, and every routed expert it used).
  double step_missed_bytes = 0, step_touched_bytes = 0;
  // The machine's best, measured just before this run by `--limits` (0: not
  // measured): raw O_DIRECT reads of the model's drive, and memory reads with
  // the profile's threads (machine_speeds.h).
  double drive_gb_per_second = 0, memory_gb_per_second = 0;
  /// Decode tokens/s the drive allows: its speed over the bytes a step missed
  /// (-1: not measured, or a step missed nothing).
  double drive_limit_tokens_per_second() const;
  /// Decode tokens/s memory allows: its speed over the bytes a step touched
  /// (-1: not measured).
  double memory_limit_tokens_per_second() const;
  /// Decode tokens/s over each limit (-1 when the limit is).
  double of_drive_limit() const;
  double of_memory_limit() const;

  // --parallel N (streams 0: the single-stream run): N streams decoding
  // together, one forward per step. decode_tokens and decode_seconds are
  // then every stream's tokens over the decode steps' wall time (aggregate).
  int streams = 0;
  std::vector<double> stream_tokens_per_second;  // each stream's decode tokens/s
  int64_t decode_steps = 0;                      // forwards of decode rows only
  double experts_per_step = 0;                   // distinct experts resolved per decode step
  double one_stream_experts_per_step = 0;        // what one stream resolves per step alone
  /// experts_per_step over streams x one stream's (-1: not a parallel run).
  double of_separate_streams() const;
  /// The median of the streams' decode tokens/s (-1: not a parallel run).
  double median_stream_tokens_per_second() const;

  /// Tokens per decode forward: 1 without drafting.
  double tokens_per_forward() const;
  /// Accepted drafts over verified ones (0 when none was verified).
  double draft_acceptance() const;

  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;
  double disk_gb_per_second() const;
  /// "on (N experts, SIZE)" or "off": the pinned set changes every other
  /// figure, so a comparison must say which side had one.
  std::string pinning() const;
};

struct BenchStart {
  bool evict = false;   // the model's files leave the page cache first
  bool warmup = false;  // one untimed generation first, in the same engine
  bool limits = false;  // measure the drive and memory speeds first (machine_speeds.h)
  uint64_t memory_read_bytes = uint64_t{4} << 30;  // the buffer the memory speed reads
};

/// The expert store's figures of a run into `run`: what changed since
/// `before`, and during decode since `after_prefill` (bytes, hits, misses,
/// urgent and cancelled reads, hit rate, prediction accuracy).
void take_expert_figures(BenchRun& run, Engine& engine, const ExpertStoreStats& before,
                         const ExpertStoreStats& after_prefill);

/// Loads `model` under `profile` (timed), prefills `prompt` and decodes
/// greedily until `new_tokens` tokens are chosen (end-of-sequence ignored).
/// With `start.warmup` the figures (load time aside) are those of a second
/// generation, in a fresh session of the same engine.
BenchRun run_bench_once(const Profile& profile, const std::filesystem::path& model,
                        std::span<const int32_t> prompt, int new_tokens, BenchStart start,
                        const Ranks& ranks);

/// Drops every file of `model` (a folder, or a GGUF's shards) from the page
/// cache (a cold start); a file it cannot drop is a warning on stderr.
void evict_model(const std::filesystem::path& model);

/// `glmrt bench --parallel N`: loads `model` under `profile` (timed), then
/// generates greedily for every prompt at once (BatchGeneration: one forward
/// per step over every stream's rows), each stream until `new_tokens`
/// tokens are chosen. With `start.warmup` the figures are a second batch's.
BenchRun run_bench_parallel(const Profile& profile, const std::filesystem::path& model,
                            std::span<const std::vector<int32_t>> prompts, int new_tokens,
                            BenchStart start);

}  // namespace glmrt::cli
