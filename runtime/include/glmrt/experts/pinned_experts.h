// The pinned set: the most used experts, read once when the engine opens
// into memory of their own (one huge-page block per layer, a slot's size per
// expert), checked like any step's experts, kept for the store's life and
// optionally locked in RAM. A step finds them before it looks at its pool
// (pinned hits), and they never take a slot.
#pragma once

#include <glmrt/base/huge_pages.h>
#include <glmrt/experts/expert_layer_pool.h>
#include <glmrt/experts/expert_slot_fill.h>
#include <glmrt/experts/expert_staging.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/experts/locked_memory.h>
#include <glmrt/experts/expert_key.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

class ProgressBar;

/// What pin() loaded.
struct PinnedSummary {
  uint64_t experts = 0, bytes = 0;  // bytes in memory
  uint64_t bytes_read = 0;
  double seconds = 0;
  uint64_t locked_bytes = 0;
  std::string lock_refusal;  // empty unless mlock was asked for and refused
};

class PinnedExperts {
 public:
  /// An empty set for `rows` expert-store rows; experts are read through
  /// `io` (through `staging` when they need converting), memory charged to `budget`.
  PinnedExperts(IoChannel& io, ExpertStaging& staging, MemoryBudget* budget, size_t rows);
  PinnedExperts(const PinnedExperts&) = delete;
  PinnedExperts& operator=(const PinnedExperts&) = delete;

  /// Loads `keys` (their reads submitted at once, with a progress bar on a
  /// terminal), planned as `pools` (by row, null for dense rows) plans them;
  /// with `lock`, mlocks them (a refusal is reported in the summary, not
  /// thrown). Experts already pinned are skipped. Throws when a key names no
  /// routed expert, a read fails or an expert is not finite; nothing of that
  /// layer is pinned then.
  const PinnedSummary& pin(std::span<const ExpertKey> keys, bool lock,
                           std::span<const std::unique_ptr<ExpertLayerPool>> pools);
  /// The pinned expert `id` of `layer`, or nullptr.
  const Expert* find(int layer, int32_t id) const;
  /// Whether `layer` has any pinned expert.
  bool holds_any(int layer) const;
  const PinnedSummary& summary() const { return summary_; }

 private:
  struct Layer {
    std::vector<int> index_of;    // by expert id: index into experts, -1 = not pinned
    std::vector<Expert> experts;  // views into memory
    HugePageBlock memory;
  };
  /// Reads and checks one layer's experts into its pinned memory.
  void pin_layer(const ExpertLayerPool& pool, std::span<const int32_t> ids, uint64_t& done,
                 ProgressBar& bar);

  IoChannel& io_;
  ExpertStaging& staging_;
  MemoryBudget* budget_;
  PinnedSummary summary_;
  std::vector<Layer> layers_;
  LockedMemory locked_;  // after layers_: unlocked before their memory goes
};

}  // namespace glmrt
