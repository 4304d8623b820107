#include "bench_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

namespace glmrt::cli {
namespace {

using Metric = std::function<double(const BenchRun&)>;

struct Row {
  std::string name;
  std::string unit;
  Metric value;
  int decimals;
  bool limits = false;    // in the table only with --limits (always in --json, null without)
  bool parallel = false;  // in the table only with --parallel (always in --json, null without)
};

const std::vector<Row>& rows() {
  static const std::vector<Row> kRows = {
      {"load", "s", [](const BenchRun& r) { return r.load_seconds; }, 3},
      // --parallel N: -1 ("-") for the single-stream run.
      {"streams", "together", [](const BenchRun& r) { return r.streams > 0 ? r.streams : -1.0; }, 0,
       false, true},
      {"decode per stream", "tokens/s",
       [](const BenchRun& r) { return r.median_stream_tokens_per_second(); }, 2, false, true},
      {"experts per step", "resolved",
       [](const BenchRun& r) { return r.streams > 0 ? r.experts_per_step : -1; }, 1, false, true},
      {"N x one stream's", "resolved",
       [](const BenchRun& r) {
         return r.streams > 0 ? r.streams * r.one_stream_experts_per_step : -1;
       },
       1, false, true},
      {"of N x one stream's", "%",
       [](const BenchRun& r) {
         return r.of_separate_streams() < 0 ? -1 : 100 * r.of_separate_streams();
       },
       1, false, true},
      {"prefill", "tokens/s", [](const BenchRun& r) { return r.prefill_tokens_per_second(); }, 2},
      {"decode", "tokens/s", [](const BenchRun& r) { return r.decode_tokens_per_second(); }, 2},
      {"read", "GB", [](const BenchRun& r) { return r.bytes_read / 1e9; }, 3},
      {"disk", "GB/s", [](const BenchRun& r) { return r.disk_gb_per_second(); }, 2},
      {"cache hit rate", "%", [](const BenchRun& r) { return 100 * r.hit_rate; }, 1},
      {"pinned experts", "0 = off", [](const BenchRun& r) { return double(r.pinned_experts); }, 0},
      {"pinned hits", "lookups", [](const BenchRun& r) { return double(r.pinned_hits); }, 0},
      {"LRU hits", "lookups", [](const BenchRun& r) { return double(r.lru_hits); }, 0},
      {"misses", "lookups", [](const BenchRun& r) { return double(r.misses); }, 0},
      {"decode misses", "per token",
       [](const BenchRun& r) {
         return r.decode_tokens ? double(r.decode_misses) / double(r.decode_tokens) : 0.0;
       },
       2},
      {"urgent reads", "misses", [](const BenchRun& r) { return double(r.urgent_reads); }, 0},
      {"cancelled reads", "guesses", [](const BenchRun& r) { return double(r.cancelled_reads); },
       0},
      {"cache bias", "0 = exact", [](const BenchRun& r) { return r.cache_bias; }, 3},
      // -1 ("-") when the routing is exact.
      {"substitutions", "per token", [](const BenchRun& r) { return r.substitutions_per_token(); },
       3},
      {"prefetch accuracy", "%",
       [](const BenchRun& r) { return r.prefetch_accuracy < 0 ? -1 : 100 * r.prefetch_accuracy; },
       1},
      {"first guesses", "% used",
       [](const BenchRun& r) {
         return r.first_guess_accuracy < 0 ? -1 : 100 * r.first_guess_accuracy;
       },
       1},
      {"next token's first layer", "% used",
       [](const BenchRun& r) { return r.next_step_accuracy < 0 ? -1 : 100 * r.next_step_accuracy; },
       1},
      {"drive idle between tokens", "ms", [](const BenchRun& r) { return r.idle_between_steps_ms; },
       2},
      {"peak RSS", "MiB", [](const BenchRun& r) { return r.peak_rss_bytes / 1048576.0; }, 1},
      // -1 (shown as "-") for a profile that drafts nothing.
      {"drafts verified", "per run",
       [](const BenchRun& r) { return r.drafting ? double(r.draft_proposed) : -1; }, 0},
      {"drafts accepted", "per run",
       [](const BenchRun& r) { return r.drafting ? double(r.draft_accepted) : -1; }, 0},
      {"draft acceptance", "%",
       [](const BenchRun& r) { return r.drafting ? 100 * r.draft_acceptance() : -1; }, 1},
      {"tokens per forward", "decode", [](const BenchRun& r) { return r.tokens_per_forward(); }, 3},
      {"step: waiting on disk", "ms", [](const BenchRun& r) { return 1e3 * r.step_disk_wait; }, 2},
      {"step: expert matmuls", "ms", [](const BenchRun& r) { return 1e3 * r.step_expert_matmuls; },
       2},
      {"step: attention", "ms", [](const BenchRun& r) { return 1e3 * r.step_attention; }, 2},
      {"step: other", "ms", [](const BenchRun& r) { return 1e3 * r.step_other; }, 2},
      // Slot memory a decode step's reads faulted in (zeroed by the kernel
      // inside the read); 0 once the store's warmer got there first.
      {"step: fresh slot memory", "MB",
       [](const BenchRun& r) { return r.step_fresh_slot_bytes() / 1e6; }, 1},
      {"slots faulted in ahead", "MB", [](const BenchRun& r) { return r.warmed_slot_bytes / 1e6; },
       1},
      // Expert parallelism: -1 ("-") with one process.
      {"step: exchange", "ms",
       [](const BenchRun& r) { return r.ranks > 1 ? 1e3 * r.step_exchange : -1; }, 2},
      {"step: exchange itself", "ms",
       [](const BenchRun& r) { return r.ranks > 1 ? 1e3 * r.step_exchange_overhead : -1; }, 2},
      {"all ranks read", "GB/s",
       [](const BenchRun& r) { return r.ranks > 1 ? r.all_ranks_read_gb_per_second() : -1; }, 3},
      // The machine's limits (--limits): -1 ("-") when not measured.
      {"step: from the drive", "MB", [](const BenchRun& r) { return r.step_missed_bytes / 1e6; }, 1,
       true},
      {"step: from memory", "MB", [](const BenchRun& r) { return r.step_touched_bytes / 1e6; }, 1,
       true},
      {"drive, raw O_DIRECT", "GB/s",
       [](const BenchRun& r) { return r.drive_gb_per_second > 0 ? r.drive_gb_per_second : -1; }, 2,
       true},
      {"memory read", "GB/s",
       [](const BenchRun& r) { return r.memory_gb_per_second > 0 ? r.memory_gb_per_second : -1; },
       2, true},
      {"drive limit", "tokens/s",
       [](const BenchRun& r) { return r.drive_limit_tokens_per_second(); }, 2, true},
      {"of drive limit", "%",
       [](const BenchRun& r) { return r.of_drive_limit() < 0 ? -1 : 100 * r.of_drive_limit(); }, 1,
       true},
      {"DRAM limit", "tokens/s",
       [](const BenchRun& r) { return r.memory_limit_tokens_per_second(); }, 2, true},
      {"of DRAM limit", "%",
       [](const BenchRun& r) { return r.of_memory_limit() < 0 ? -1 : 100 * r.of_memory_limit(); },
       1, true},
  };
  return kRows;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double median_of(const BenchSeries& s, const Metric& metric) {
  std::vector<double> values;
  for (const BenchRun& r : s.runs) values.push_back(metric(r));
  return median(values);
}

/// Whether the profile's runs had a pinned set. Runs can differ: each run
/// adds to the usage history, so a first run without one may be followed by
/// pinned ones; then every distinct state is listed with its runs.
std::string pinning_of(const BenchSeries& s) {
  std::vector<std::pair<std::string, std::vector<size_t>>> states;
  for (size_t i = 0; i < s.runs.size(); ++i) {
    const std::string state = s.runs[i].pinning();
    auto it = std::find_if(states.begin(), states.end(),
                           [&](const auto& entry) { return entry.first == state; });
    if (it == states.end()) it = states.insert(states.end(), {state, {}});
    it->second.push_back(i + 1);
  }
  if (states.size() == 1) return states.front().first;
  std::string text;
  for (const auto& [state, runs] : states)
    text += fmt::format("{}{} in run{} {}", text.empty() ? "" : ", ", state,
                        runs.size() == 1 ? "" : "s", fmt::join(runs, ","));
  return text;
}

nlohmann::json run_json(const BenchRun& r) {
  nlohmann::json j = {{"load_s", r.load_seconds},
                      {"prefill_tokens", r.prefill_tokens},
                      {"prefill_s", r.prefill_seconds},
                      {"prefill_tokens_per_s", r.prefill_tokens_per_second()},
                      {"decode_tokens", r.decode_tokens},
                      {"decode_s", r.decode_seconds},
                      {"decode_tokens_per_s", r.decode_tokens_per_second()},
                      {"bytes_read", r.bytes_read},
                      {"disk_busy_s", r.disk_busy_seconds},
                      {"disk_gb_per_s", r.disk_gb_per_second()},
                      {"cache_hit_rate", r.hit_rate},
                      {"pinned_experts", r.pinned_experts},
                      {"pinned_bytes", r.pinned_bytes},
                      {"pinning", r.pinned_experts > 0 ? "on" : "off"},
                      {"pinned_hits", r.pinned_hits},
                      {"lru_hits", r.lru_hits},
                      {"misses", r.misses},
                      {"decode_misses", r.decode_misses},
                      {"urgent_reads", r.urgent_reads},
                      {"cancelled_reads", r.cancelled_reads},
                      {"cancelled_bytes", r.cancelled_bytes},
                      {"cache_bias", r.cache_bias},
                      {"cache_bias_rows", r.cache_bias_rows},
                      {"cache_bias_substitutions", r.cache_bias_substitutions},
                      {"peak_rss_bytes", r.peak_rss_bytes},
                      {"step_split_ms",
                       {{"waiting_on_disk", 1e3 * r.step_disk_wait},
                        {"expert_matmuls", 1e3 * r.step_expert_matmuls},
                        {"attention", 1e3 * r.step_attention},
                        {"other", 1e3 * r.step_other}}},
                      {"decode_fresh_slot_bytes", r.decode_fresh_slot_bytes},
                      {"step_fresh_slot_bytes", r.step_fresh_slot_bytes()},
                      {"warmed_slot_bytes", r.warmed_slot_bytes},
                      {"tokens", r.tokens},
                      {"ranks", r.ranks},
                      {"rank_experts", rank_experts_json(r.rank_experts)},
                      {"decode_bytes_all_ranks", r.decode_bytes_all_ranks},
                      {"all_ranks_read_gb_per_s", r.all_ranks_read_gb_per_second()},
                      {"step_exchange_ms", 1e3 * r.step_exchange},
                      {"step_exchange_overhead_ms", 1e3 * r.step_exchange_overhead},
                      {"step_missed_bytes", r.step_missed_bytes},
                      {"step_touched_bytes", r.step_touched_bytes}};
  // The limits: null when --limits was not given (or a step missed nothing).
  const auto measured = [](double v) {
    return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  j["drive_gb_per_s"] = measured(r.drive_gb_per_second > 0 ? r.drive_gb_per_second : -1);
  j["memory_gb_per_s"] = measured(r.memory_gb_per_second > 0 ? r.memory_gb_per_second : -1);
  j["drive_limit_tokens_per_s"] = measured(r.drive_limit_tokens_per_second());
  j["memory_limit_tokens_per_s"] = measured(r.memory_limit_tokens_per_second());
  j["of_drive_limit"] = measured(r.of_drive_limit());
  j["of_memory_limit"] = measured(r.of_memory_limit());
  j["draft"] = r.drafting ? nlohmann::json{{"forwards", r.draft_forwards},
                                           {"proposed", r.draft_proposed},
                                           {"accepted", r.draft_accepted},
                                           {"decided", r.draft_decided},
                                           {"probes", r.draft_probes},
                                           {"tokens_per_forward", r.tokens_per_forward()}}
                          : nlohmann::json(nullptr);
  j["parallel"] =
      r.streams > 0
          ? nlohmann::json{{"streams", r.streams},
                           {"aggregate_decode_tokens_per_s", r.decode_tokens_per_second()},
                           {"stream_decode_tokens_per_s", r.stream_tokens_per_second},
                           {"decode_steps", r.decode_steps},
                           {"experts_per_step", r.experts_per_step},
                           {"one_stream_experts_per_step", r.one_stream_experts_per_step},
                           {"of_separate_streams", r.of_separate_streams()}}
          : nlohmann::json(nullptr);
  j["prefetch_accuracy"] = measured(r.prefetch_accuracy);
  j["first_guess_accuracy"] = measured(r.first_guess_accuracy);
  j["next_step_accuracy"] = measured(r.next_step_accuracy);
  j["drive_idle_between_steps_ms"] = measured(r.idle_between_steps_ms);
  return j;
}

}  // namespace

void print_bench_table(std::FILE* out, const BenchSetup& setup,
                       const std::vector<BenchSeries>& series) {
  fmt::print(out, "model {}: {}-token prompt, {} new tokens, greedy; medians of {} run{}{}{}\n",
             setup.model.string(), setup.prompt.size(), setup.new_tokens, setup.reps,
             setup.reps == 1 ? "" : "s, profiles alternated",
             setup.evict ? ", page cache evicted before each" : "",
             setup.warmup ? ", each timed after an untimed pass in the same process" : "");
  if (setup.parallel > 0)
    fmt::print(out,
               "{} streams decoding together ({}), one forward per step: decode = every stream's "
               "tokens over the decode steps' time; experts per step = distinct experts a decode "
               "step resolved, against {} x what one stream resolves alone\n",
               setup.parallel, setup.same_prompt ? "the same prompt" : "prompts shifted by 97 ids",
               setup.parallel);
  if (setup.limits)
    fmt::print(out,
               "limits measured before each run: drive = raw O_DIRECT GB/s over the bytes a step "
               "gets from it, DRAM = memory read GB/s over the bytes a step reads\n");
  constexpr int kName = 26, kColumn = 18;
  fmt::print(out, "{:<{}}", "", kName);
  for (size_t p = 0; p < series.size(); ++p)
    fmt::print(out, "{:>{}}", fmt::format("[{}]", p + 1), kColumn);
  fmt::print(out, "\n");
  for (const Row& row : rows()) {
    if (row.limits && !setup.limits) continue;
    if (row.parallel && setup.parallel == 0) continue;
    fmt::print(out, "{:<{}}", fmt::format("{} ({})", row.name, row.unit), kName);
    for (const BenchSeries& s : series) {
      const double v = median_of(s, row.value);
      fmt::print(out, "{:>{}}", v < 0 ? std::string("-") : fmt::format("{:.{}f}", v, row.decimals),
                 kColumn);
    }
    fmt::print(out, "\n");
  }
  for (size_t p = 0; p < series.size(); ++p)
    fmt::print(out, "[{}] {}; pinning: {}\n", p + 1, series[p].profile.string(),
               pinning_of(series[p]));
  if (setup.parallel > 0)
    for (size_t p = 0; p < series.size(); ++p)
      if (!series[p].runs.empty())
        fmt::print(out, "[{}] decode per stream (tokens/s, last run): {:.2f}\n", p + 1,
                   fmt::join(series[p].runs.back().stream_tokens_per_second, ", "));
  // Each rank's counters in the last run of each profile, a line per rank.
  if (setup.ranks > 1)
    for (size_t p = 0; p < series.size(); ++p)
      if (!series[p].runs.empty())
        for (const cluster::Counters& c : series[p].runs.back().rank_experts)
          fmt::print(out,
                     "[{}] rank {} experts: {} owned; {} lookups, {} pinned hits, {} LRU hits, {} "
                     "misses, {:.3f} GB read, drive busy {:.1f} s, {} reads ahead ({} used, "
                     "{:.3f} GB wasted) (last run)\n",
                     p + 1, c.rank, c.experts_owned, c.lookups, c.pinned_hits, c.hits, c.misses,
                     c.bytes_read / 1e9, c.busy_seconds, c.reads_ahead, c.reads_ahead_used,
                     c.bytes_ahead_wasted / 1e9);
  std::fflush(out);
}

void print_bench_json(std::FILE* out, const BenchSetup& setup,
                      const std::vector<BenchSeries>& series) {
  nlohmann::json profiles = nlohmann::json::array();
  for (const BenchSeries& s : series) {
    nlohmann::json median = nlohmann::json::object();
    for (const Row& row : rows()) {
      const double v = median_of(s, row.value);
      median[fmt::format("{} ({})", row.name, row.unit)] =
          v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
    }
    nlohmann::json runs = nlohmann::json::array();
    for (const BenchRun& r : s.runs) runs.push_back(run_json(r));
    profiles.push_back({{"profile", s.profile.string()},
                        {"pinning", pinning_of(s)},
                        {"median", median},
                        {"runs", runs}});
  }
  const nlohmann::json doc = {{"model", setup.model.string()},
                              {"prompt", setup.prompt},
                              {"new_tokens", setup.new_tokens},
                              {"reps", setup.reps},
                              {"evict", setup.evict},
                              {"warmup", setup.warmup},
                              {"limits", setup.limits},
                              {"limits_memory_bytes", setup.memory_read_bytes},
                              {"ranks", setup.ranks},
                              {"parallel", setup.parallel},
                              {"same_prompt", setup.same_prompt},
                              {"profiles", profiles}};
  fmt::print(out, "{}\n", doc.dump());
  std::fflush(out);
}

}  // namespace glmrt::cli
