#include "expert_counters_report.h"

#include <glmrt/base/byte_size.h>

#include <fmt/format.h>

namespace glmrt::cli {

void print_expert_counters(std::FILE* out, Engine& engine, const ExpertStoreStats& e) {
  const ExpertStore& store = engine.experts();
  fmt::print(out, "expert lookups: {} pinned hits, {} LRU hits, {} misses; {} read\n",
             e.pinned_hits, e.hits, e.misses, format_byte_size(e.bytes_read));
  const PinnedSummary& p = store.pinned();
  const MemoryPlan& plan = engine.memory_plan();
  std::string lock;
  if (engine.profile().mlock_pinned)
    lock = p.lock_refusal.empty() ? fmt::format(", locked {}", format_byte_size(p.locked_bytes))
                                  : std::string(", mlock refused");
  fmt::print(out,
             "pinned set: {} experts, {} of {} allowed (memory.pinned {}), loaded in {:.2f} s "
             "({} read){}; LRU {} experts per layer\n",
             p.experts, format_byte_size(p.bytes), format_byte_size(plan.pinned_bytes),
             plan.pinned_auto ? "auto" : "fixed", p.seconds, format_byte_size(p.bytes_read), lock,
             store.cache_per_layer());
}

void print_expert_counters(std::FILE* out, Engine& engine) {
  print_expert_counters(out, engine, engine.experts().stats());
}

}  // namespace glmrt::cli
