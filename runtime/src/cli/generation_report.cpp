#include "generation_report.h"

#include "cache_bias_report.h"
#include "expert_counters_report.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/memory.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace glmrt::cli {
namespace {

double per_second(int64_t tokens, double seconds) {
  return seconds > 0 ? tokens / seconds : 0.0;
}

constexpr double kMiB = 1048576.0;

/// The threads the run used: the compute team the kernels plugin and the core
/// share, and the threads plugins started through the host (io readers).
void print_threads(std::FILE* out, const Engine& engine) {
  std::string started;
  int total = 0;
  for (const auto& [purpose, count] : engine.services().plugin_threads_by_purpose()) {
    started += fmt::format("{}{} {}", started.empty() ? "" : ", ", count, purpose);
    total += count;
  }
  fmt::print(out, "threads: {} compute (the core and kernels plugin {}); {} started by plugins{}\n",
             engine.services().n_threads(), engine.kernels_info().name, total,
             started.empty() ? std::string() : fmt::format(" ({})", started));
}

/// The depth each layer read ahead at: fixed, or under `auto` the range of
/// the layers' mean depths (the engine's whole run, not one answer's).
std::string describe_depth(const ExpertStore& store) {
  const ReadAheadDepth& depth = store.read_ahead_depth();
  if (!depth.automatic()) return fmt::format("depth {}", depth.max_depth());
  const auto layers = depth.chosen();
  if (layers.empty()) return "depth auto (nothing predicted yet)";
  double low = layers.front().mean_depth, high = low, sum = 0;
  for (const auto& l : layers) {
    low = std::min(low, l.mean_depth);
    high = std::max(high, l.mean_depth);
    sum += l.mean_depth;
  }
  return fmt::format("depth auto: {:.1f}-{:.1f} per layer (mean {:.2f} over {} layers)", low, high,
                     sum / static_cast<double>(layers.size()), layers.size());
}

/// Read-ahead on its own line: depth, prediction accuracy (measured even when
/// nothing is read ahead), what was read ahead and what of it was wasted.
void print_read_ahead(std::FILE* out, const ExpertStore& store, const ExpertStoreStats& e,
                      const PluginInfo& io) {
  const std::string slots =
      store.sizes().prefetch == 0
          ? std::string("off (0 slots per layer)")
          : fmt::format("{} slots per layer, {}", store.sizes().prefetch, describe_depth(store));
  // The refined predictions are the accuracy; the first guesses they
  // replaced, and the next token's first layer guessed early, apart.
  const std::string first =
      e.first_guesses > 0 ? fmt::format("; first guesses {:.1f}%", 100.0 * e.first_guess_accuracy())
                          : std::string();
  const std::string predicted =
      e.predicted > 0
          ? fmt::format("predicted {} experts, {} used (accuracy {:.1f}%{})", e.predicted,
                        e.predicted_used, 100.0 * e.prediction_accuracy(), first)
          : std::string("nothing predicted");
  const std::string next_token =
      e.next_step_predicted > 0
          ? fmt::format("; next token's first MoE layer: {} predicted, {} used ({:.1f}%)",
                        e.next_step_predicted, e.next_step_predicted_used,
                        100.0 * e.next_step_accuracy())
          : std::string();
  const std::string idle =
      e.step_gaps > 0 ? fmt::format("; drive idle between tokens {:.2f} ms per token",
                                    1e3 * e.idle_between_steps_seconds / double(e.step_gaps))
                      : std::string();
  // Urgent misses and cancelled guesses exist with an io plugin of ABI 1.6.
  const std::string priority =
      io.abi_minor >= GLMRT_ABI_MINOR_IO_PRIORITY
          ? fmt::format("; {} misses read urgent, {} guesses cancelled ({:.1f} MiB saved)",
                        e.urgent_reads, e.cancelled_reads, e.cancelled_bytes / kMiB)
          : std::string();
  fmt::print(
      out,
      "prefetch: {}; {}{}; {} reads ahead ({:.1f} MiB), {} used ({} late), {:.1f} MiB wasted{}{}\n",
      slots, predicted, next_token, e.prefetch_reads, e.prefetch_bytes / kMiB,
      e.prefetch_reads_used, e.prefetch_reads_late, e.prefetch_bytes_wasted / kMiB, priority, idle);
}

}  // namespace

void print_generation_report(std::FILE* out, const SessionStats& s, const ExpertStoreStats& e,
                             Engine& engine) {
  const ExpertStore& store = engine.experts();
  // The first line's form is relied on by scripts: new figures go on lines of their own.
  fmt::print(out,
             "prefill: {} tokens ({} reused from the cache) in {:.3f} s ({:.2f} tokens/s); "
             "decode: {} tokens in {:.3f} s ({:.2f} tokens/s)\n",
             s.prefilled_tokens, s.reused_tokens, s.prefill_seconds,
             per_second(s.prefilled_tokens, s.prefill_seconds), s.decoded_tokens, s.decode_seconds,
             per_second(s.decoded_tokens, s.decode_seconds));
  if (engine.model().cache_bias().on())
    fmt::print(out, "{}\n", describe_cache_bias(cache_bias_so_far(engine.model())));
  // The hit rate counts pinned and LRU hits (the lookups line splits them).
  if (e.lookups() > 0)
    fmt::print(out, "expert cache: hit rate {:.1f}% ({} hits, {} misses, {:.1f} MiB read)\n",
               100.0 * e.hit_rate(), e.pinned_hits + e.hits, e.misses, e.bytes_read / kMiB);
  else
    fmt::print(out, "expert cache: no expert looked up\n");
  const PluginInfo& io = engine.io_info();
  if (e.extents_read > 0)
    fmt::print(out,
               "expert reads: {} reads ({} plugin {}, ABI {}), disk busy {:.3f} s ({:.2f} GB/s), "
               "steps waited {:.3f} s on reads, overlap {:.0f}%\n",
               e.extents_read, io.name, io.version, io.abi, e.busy_seconds,
               e.busy_seconds > 0 ? e.bytes_read / e.busy_seconds / 1e9 : 0.0, e.wait_seconds,
               100.0 * e.overlap());
  else
    fmt::print(out, "expert reads: none ({} plugin {}, ABI {})\n", io.name, io.version, io.abi);
  print_read_ahead(out, store, e, io);
  fmt::print(out,
             "expert slots: {} per layer, {} allocated ({:.1f} MiB each); {} steps streamed "
             "through the pool\n",
             store.pool_capacity(), e.slots_allocated, store.largest_slot_bytes() / kMiB,
             e.streamed_steps);
  fmt::print(out, "peak RSS: {:.1f} MiB; budgeted memory peak {:.1f} MiB\n",
             peak_rss_bytes() / kMiB, engine.budget().peak() / kMiB);
  print_expert_counters(out, engine, e);
  print_threads(out, engine);
  std::fflush(out);
}

void print_generation_report(std::FILE* out, const SessionStats& stats, Engine& engine) {
  print_generation_report(out, stats, engine.experts().stats(), engine);
}

void print_draft_report(std::FILE* out, const DraftStats& stats) {
  for (const std::string& line : describe_draft_stats(stats)) fmt::print(out, "{}\n", line);
  std::fflush(out);
}

void print_load_report(std::FILE* out, const Engine& engine) {
  const LoadSummary& load = engine.load_summary();
  fmt::print(
      out,
      "load: resident weights {:.2f} GB in {:.2f} s ({:.2f} GB/s; {} tensors read in place, {} "
      "converted); model opened in {:.2f} s\n",
      load.bytes / 1e9, load.seconds, load.seconds > 0 ? load.bytes / 1e9 / load.seconds : 0.0,
      load.tensors_read_in_place, load.tensors_converted, engine.open_seconds());
  if (load.matrices_packed > 0)
    fmt::print(out, "load: {} matrices ({}) packed for kernels plugin `{}` in {:.2f} s\n",
               load.matrices_packed, format_byte_size(load.packed_bytes), engine.kernels().name(),
               load.packing_seconds);
  // The slots a budget limit allows are faulted in at load (ExpertStore::finish_warming).
  if (const ExpertStoreStats& experts = engine.experts().stats(); experts.warmed_slot_bytes > 0)
    fmt::print(out, "load: expert slots faulted in: {}, waited {:.2f} s of the opening for them\n",
               format_byte_size(experts.warmed_slot_bytes),
               engine.experts().warming_wait_seconds());
  std::fflush(out);
}

}  // namespace glmrt::cli
