#include <glmrt/base/error.h>
#include <glmrt/distributed/step_placement.h>

namespace glmrt {

std::vector<int> place_experts(std::span<const int32_t> ids, const PlacementView& view,
                               std::vector<double>& queued) {
  if (view.holders.empty()) fail("expert placement: no rank runs experts");
  std::vector<int> placed(ids.size(), -1);
  // Experts in some rank's memory first: they cost no read, and the misses
  // placed after them see every rank's load.
  for (size_t i = 0; i < ids.size(); ++i) {
    const int owner = view.owner(ids[i]);
    if (owner >= 0 && view.resident(owner, ids[i])) {
      placed[i] = owner;
      continue;
    }
    for (int rank : view.holders)
      if (view.resident(rank, ids[i]) && (placed[i] < 0 || queued[rank] < queued[placed[i]]))
        placed[i] = rank;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (placed[i] >= 0) continue;
    const int owner = view.owner(ids[i]);
    int best = -1;
    for (int rank : view.holders) {
      if (best < 0 || queued[rank] < queued[best] ||
          (queued[rank] == queued[best] && rank == owner))
        best = rank;
    }
    placed[i] = best;
    queued[best] += 1;
  }
  return placed;
}

}  // namespace glmrt
