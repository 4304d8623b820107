#include "ranks.h"

#include <glmrt/base/byte_size.h>

#include <fmt/format.h>

namespace glmrt::cli {

std::vector<cluster::Counters> rank_counters(Engine& engine, ShardedExperts* shards) {
  if (shards) return shards->rank_counters();
  int32_t experts_owned = 0;
  for (bool row : engine.experts().expert_rows())
    experts_owned += row ? engine.config().n_routed_experts : 0;
  return {cluster::counters_of(engine.experts().stats(), 0, experts_owned)};
}

nlohmann::json rank_experts_json(const std::vector<cluster::Counters>& counters) {
  nlohmann::json list = nlohmann::json::array();
  for (const cluster::Counters& c : counters)
    list.push_back({{"rank", c.rank},
                    {"experts_owned", c.experts_owned},
                    {"lookups", c.lookups},
                    {"misses", c.misses},
                    {"bytes_read", c.bytes_read},
                    {"wait_seconds", c.wait_seconds},
                    {"busy_seconds", c.busy_seconds},
                    {"reads_ahead", c.reads_ahead},
                    {"reads_ahead_used", c.reads_ahead_used},
                    {"bytes_ahead_wasted", c.bytes_ahead_wasted}});
  return list;
}

void print_rank_report(std::FILE* out, Engine& engine, ShardedExperts* shards) {
  if (!shards) return;
  const ExchangeTimes& t = shards->times();
  const int64_t forwards = engine.model().counters().forward_calls;
  const double total = t.send_seconds + t.wait_seconds;
  fmt::print(
      out,
      "exchange: {} ranks, wire {}, {} MoE steps, {:.3f} ms per MoE step ({:.3f} ms "
      "sending, {:.3f} ms waiting for ranks; the exchange itself, beyond the ranks' own work: "
      "{:.3f} ms), "
      "{:.2f} ms per forward; {} sent, {} received\n",
      shards->ranks(), cluster::wire_name(shards->wire()), t.steps,
      t.steps ? 1e3 * total / double(t.steps) : 0.0,
      t.steps ? 1e3 * t.send_seconds / double(t.steps) : 0.0,
      t.steps ? 1e3 * t.wait_seconds / double(t.steps) : 0.0,
      t.steps ? 1e3 * t.overhead_seconds / double(t.steps) : 0.0,
      forwards ? 1e3 * total / double(forwards) : 0.0, format_byte_size(t.bytes_sent),
      format_byte_size(t.bytes_received));
  for (const cluster::Counters& c : shards->rank_counters())
    fmt::print(out,
               "rank {} experts: {} owned; {} lookups: {} pinned hits, {} LRU hits, {} misses; {} "
               "read, {:.2f} s waiting on reads; drive busy {:.2f} s; {} reads ahead, {} used, "
               "{} wasted\n",
               c.rank, c.experts_owned, c.lookups, c.pinned_hits, c.hits, c.misses,
               format_byte_size(c.bytes_read), c.wait_seconds, c.busy_seconds, c.reads_ahead,
               c.reads_ahead_used, format_byte_size(c.bytes_ahead_wasted));
}

}  // namespace glmrt::cli
