// How often the router chose each routed expert: a grid of selection counts,
// one row per expert-store row (the main layers, then the MTP layer), one
// column per routed expert. Dense layers keep a row of zeros. The grand total
// always fits in 64 bits (so every count and layer total does): an addition
// that would pass it is refused, never wrapped.
#pragma once

#include <glmrt/experts/expert_key.h>

#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

class ExpertUsage {
 public:
  ExpertUsage() = default;
  ExpertUsage(int layers, int experts);

  int layers() const { return layers_; }
  int experts() const { return experts_; }
  bool same_shape(const ExpertUsage& other) const {
    return layers_ == other.layers_ && experts_ == other.experts_;
  }

  uint64_t count(int layer, int expert) const { return counts_[index(layer, expert)]; }
  /// Adds `n` selections of one expert; throws glmrt::Error out of range or
  /// when the total would pass 2^64 - 1.
  void add(int layer, int expert, uint64_t n);
  /// One selection of each id (ids out of range throw).
  void record(int layer, std::span<const int32_t> ids);
  /// Adds every count of `other` (same shape, total within 64 bits; throws otherwise).
  void add(const ExpertUsage& other);
  /// Whether adding `n` selections keeps the total within 64 bits.
  bool can_add(uint64_t n) const { return n <= kMaxTotal - total_; }
  void clear();

  std::span<const uint64_t> row(int layer) const;
  uint64_t layer_total(int layer) const;
  uint64_t total() const { return total_; }
  bool empty() const { return total_ == 0; }

  static constexpr uint64_t kMaxTotal = UINT64_MAX;

  /// The experts with a non-zero count, most used first (ties: lower layer,
  /// then lower expert id, so the order is deterministic).
  std::vector<ExpertKey> ranked() const;
  /// The same within one layer (expert ids only).
  std::vector<int> ranked_in_layer(int layer) const;
  /// Share of a layer's selections taken by its `n` most used experts.
  double top_share(int layer, int n) const;

 private:
  size_t index(int layer, int expert) const {
    return static_cast<size_t>(layer) * static_cast<size_t>(experts_) + static_cast<size_t>(expert);
  }
  int layers_ = 0, experts_ = 0;
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;  // of counts_
};

}  // namespace glmrt
