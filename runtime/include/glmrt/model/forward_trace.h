// The discrete decisions a forward pass took — the DSA indexer's key
// selections and the router's experts — recorded on request, so `validate`
// can compare them with the reference's and name the first divergence.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace glmrt {

struct ForwardTrace {
  using ByPosition = std::map<int64_t, std::vector<int32_t>>;
  /// layer -> query position -> its selected key positions, ascending. Only
  /// rows that saw more than index_topk keys (the others attend to every
  /// visible key). A "shared" layer records the selection it reuses.
  std::map<int, ByPosition> indexer;
  /// MoE layer -> position -> its routed expert ids, ascending.
  std::map<int, ByPosition> experts;

  void record_selection(int layer, int64_t position, std::span<const int32_t> keys) {
    indexer[layer][position].assign(keys.begin(), keys.end());
  }
  void record_experts(int layer, int64_t position, std::vector<int32_t> ids) {
    std::sort(ids.begin(), ids.end());
    experts[layer][position] = std::move(ids);
  }
  void clear() {
    indexer.clear();
    experts.clear();
  }
};

}  // namespace glmrt
