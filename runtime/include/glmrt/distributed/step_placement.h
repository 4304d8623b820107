// Where one MoE step's experts run when every rank can read every expert
// (`distributed.placement: least_loaded`, docs/distributed.md). Fixed
// shards leave a rank idle whenever a token's experts fall unevenly on the
// ranks: the layer waits for the rank with the most misses. Here an expert
// some rank has in memory (or on its way there) runs on that rank; one that
// no rank holds is read by the rank with the fewest reads queued so far,
// so each layer's misses spread evenly over the drives.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace glmrt {

struct PlacementView {
  std::span<const int> holders;  // the ranks that run experts, ascending
  /// Whether `rank` has `expert` of this layer in memory or being read.
  std::function<bool(int rank, int32_t expert)> resident;
  /// The rank whose shard owns `expert` (preferred on a tie).
  std::function<int(int32_t expert)> owner;
};

/// The rank each of `ids` (distinct experts of one layer) runs on. `queued`
/// (by rank) is what each rank's drive has to read before these: it grows
/// by one for each miss placed on a rank, so a second call (the next
/// layer's read-ahead) queues behind the first. Ties: the owner, then the
/// lowest rank. The same input gives the same placement.
std::vector<int> place_experts(std::span<const int32_t> ids, const PlacementView& view,
                               std::vector<double>& queued);

}  // namespace glmrt
