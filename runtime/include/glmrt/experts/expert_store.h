// Resolves the routed experts a step needs: the pinned set (the most used
// experts, loaded once at start and kept), then the LRU cache per MoE layer, then one
// batched read through the io plugin for every miss, checked (every byte
// written, no NaN or infinity), converted to the profile's expert precision
// and cached converted. A read that fails caches nothing: the error names the
// files, offsets and experts, and the next acquire reads them again.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/locked_memory.h>
#include <glmrt/history/expert_usage.h>
#include <glmrt/plugin/io.h>
#include <glmrt/profile/profile.h>
#include <glmrt/weights/matrix.h>

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

struct Expert {
  Matrix gate, up, down;
  uint64_t bytes() const { return gate.bytes() + up.bytes() + down.bytes(); }
};

struct ExpertStoreStats {
  uint64_t pinned_hits = 0;                   // experts a step found in the pinned set
  uint64_t hits = 0;                          // experts a step found in the LRU cache
  uint64_t misses = 0;                        // experts a step had to read
  uint64_t bytes_read = 0, extents_read = 0;  // of successful reads (steps only, not pinning)
  double read_seconds = 0, convert_seconds = 0;
  /// Pinned and LRU hits over every lookup.
  double hit_rate() const {
    const uint64_t all = pinned_hits + hits + misses;
    return all ? double(pinned_hits + hits) / double(all) : 0.0;
  }
};

/// What pin() loaded.
struct PinnedSummary {
  uint64_t experts = 0, bytes = 0;  // bytes in memory
  uint64_t bytes_read = 0;
  double seconds = 0;
  uint64_t locked_bytes = 0;
  std::string lock_refusal;  // empty unless mlock was asked for and refused
};

class ExpertStore {
 public:
  ExpertStore(std::vector<std::vector<ExpertLayout>> layouts, const TensorDirectory& tensors,
              plugin::Io& io, WeightBits bits, int cache_per_layer, MemoryBudget* budget);

  /// The experts `ids` of `layer` (distinct ids), in that order. The returned
  /// pointers stay valid while held, even if the cache evicts them meanwhile.
  /// Throws glmrt::Error when the io plugin fails or leaves bytes unwritten,
  /// or an expert holds a NaN or infinity; nothing of that batch is cached.
  std::vector<std::shared_ptr<const Expert>> acquire(int layer, std::span<const int32_t> ids);

  /// Hints the io plugin that these experts will be wanted soon.
  void prefetch(int layer, std::span<const int32_t> ids);

  /// Loads `keys` into the pinned set (in parallel, with a progress bar on a
  /// terminal), where they stay for the store's life; with `lock`, mlocks
  /// them (a refusal is reported in the summary, not thrown). Experts already
  /// pinned are skipped. Throws like acquire() when a read fails.
  const PinnedSummary& pin(std::span<const ExpertKey> keys, bool lock);
  const PinnedSummary& pinned() const { return pinned_summary_; }
  bool is_pinned(int layer, int32_t id) const;
  /// MoE rows (true where the layer has routed experts).
  std::vector<bool> expert_rows() const;
  int experts_per_layer() const;

  const ExpertStoreStats& stats() const { return stats_; }
  int cache_per_layer() const { return capacity_; }

 private:
  struct Entry {
    int32_t id;
    std::shared_ptr<const Expert> expert;
  };
  std::shared_ptr<const Expert> lookup(int layer, int32_t id);
  void insert(int layer, int32_t id, std::shared_ptr<const Expert> expert);
  /// Reads the missing experts into `staging` (one block each); throws naming
  /// the files, offsets and experts when the io plugin fails or leaves an
  /// extent's end unwritten.
  void read_batch(int layer, std::span<const int32_t> ids, std::vector<AlignedBlock>& staging);
  /// Checks an expert's raw tensors for NaN/infinity and converts them.
  std::shared_ptr<const Expert> convert(int layer, int32_t id, const ExpertLayout& layout,
                                        std::span<const std::byte> staging,
                                        const std::string& category = "expert cache") const;
  /// Reads and converts one layer's experts into the pinned set.
  void pin_layer(int layer, std::span<const int32_t> ids, uint64_t& done, class ProgressBar& bar);

  std::vector<std::vector<ExpertLayout>> layouts_;
  const TensorDirectory& tensors_;
  plugin::Io& io_;
  WeightBits bits_;
  int capacity_;
  MemoryBudget* budget_;
  std::vector<std::list<Entry>> lru_;  // per layer, most recently used first
  std::vector<std::vector<std::shared_ptr<const Expert>>>
      pinned_;  // [layer][id], null = not pinned
  PinnedSummary pinned_summary_;
  LockedMemory locked_;
  ExpertStoreStats stats_;
};

}  // namespace glmrt
