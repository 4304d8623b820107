// Resolves the routed experts a step needs: LRU cache per MoE layer, then one
// batched read through the io plugin for every miss, checked (every byte
// written, no NaN or infinity), converted to the profile's expert precision
// and cached converted. A read that fails caches nothing: the error names the
// files, offsets and experts, and the next acquire reads them again.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/plugin/io.h>
#include <glmrt/profile/profile.h>
#include <glmrt/weights/matrix.h>

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <vector>

namespace glmrt {

struct Expert {
  Matrix gate, up, down;
  uint64_t bytes() const { return gate.bytes() + up.bytes() + down.bytes(); }
};

struct ExpertStoreStats {
  uint64_t hits = 0, misses = 0;
  uint64_t bytes_read = 0, extents_read = 0;  // of successful reads
  double read_seconds = 0, convert_seconds = 0;
  double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 0.0; }
};

class ExpertStore {
 public:
  ExpertStore(std::vector<std::vector<ExpertLayout>> layouts, const TensorDirectory& tensors,
              plugin::Io& io, WeightPrecision bits, int cache_per_layer, MemoryBudget* budget);

  /// The experts `ids` of `layer` (distinct ids), in that order. The returned
  /// pointers stay valid while held, even if the cache evicts them meanwhile.
  /// Throws glmrt::Error when the io plugin fails or leaves bytes unwritten,
  /// or an expert holds a NaN or infinity; nothing of that batch is cached.
  std::vector<std::shared_ptr<const Expert>> acquire(int layer, std::span<const int32_t> ids);

  /// Hints the io plugin that these experts will be wanted soon.
  void prefetch(int layer, std::span<const int32_t> ids);

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
                                        std::span<const std::byte> staging) const;

  std::vector<std::vector<ExpertLayout>> layouts_;
  const TensorDirectory& tensors_;
  plugin::Io& io_;
  WeightPrecision bits_;
  int capacity_;
  MemoryBudget* budget_;
  std::vector<std::list<Entry>> lru_;  // per layer, most recently used first
  ExpertStoreStats stats_;
};

}  // namespace glmrt
