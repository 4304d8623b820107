#include <glmrt/base/error.h>
#include <glmrt/history/expert_usage.h>

#include <algorithm>
#include <numeric>

namespace glmrt {

ExpertUsage::ExpertUsage(int layers, int experts)
    : layers_(layers),
      experts_(experts),
      counts_(static_cast<size_t>(std::max(layers, 0)) *
              static_cast<size_t>(std::max(experts, 0))) {
  if (layers < 0 || experts < 0) fail("expert usage: negative shape {} x {}", layers, experts);
}

void ExpertUsage::add(int layer, int expert, uint64_t n) {
  if (layer < 0 || layer >= layers_ || expert < 0 || expert >= experts_)
    fail("expert usage: no cell (layer {}, expert {}) in a {} x {} grid", layer, expert, layers_,
         experts_);
  if (!can_add(n))
    fail(
        "expert usage: adding {} selections of layer {} expert {} to {} would pass 2^64 - 1 "
        "selections",
        n, layer, expert, total_);
  counts_[index(layer, expert)] += n;
  total_ += n;
}

void ExpertUsage::record(int layer, std::span<const int32_t> ids) {
  for (int32_t id : ids) add(layer, id, 1);
}

void ExpertUsage::add(const ExpertUsage& other) {
  if (!same_shape(other))
    fail("expert usage: cannot add a {} x {} grid to a {} x {} one", other.layers_, other.experts_,
         layers_, experts_);
  if (!can_add(other.total_))
    fail("expert usage: adding {} selections to {} would pass 2^64 - 1 selections", other.total_,
         total_);
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
}

void ExpertUsage::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
}

std::span<const uint64_t> ExpertUsage::row(int layer) const {
  if (layer < 0 || layer >= layers_) fail("expert usage: no layer {}", layer);
  return std::span(counts_).subspan(index(layer, 0), static_cast<size_t>(experts_));
}

uint64_t ExpertUsage::layer_total(int layer) const {
  const auto r = row(layer);
  return std::accumulate(r.begin(), r.end(), uint64_t{0});
}

std::vector<ExpertKey> ExpertUsage::ranked() const {
  std::vector<ExpertKey> keys;
  for (int l = 0; l < layers_; ++l)
    for (int e = 0; e < experts_; ++e)
      if (count(l, e)) keys.push_back({l, e});
  std::stable_sort(keys.begin(), keys.end(), [&](const ExpertKey& a, const ExpertKey& b) {
    return count(a.layer, a.expert) > count(b.layer, b.expert);
  });
  return keys;
}

std::vector<int> ExpertUsage::ranked_in_layer(int layer) const {
  std::vector<int> ids;
  const auto r = row(layer);
  for (int e = 0; e < experts_; ++e)
    if (r[e]) ids.push_back(e);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return r[a] > r[b]; });
  return ids;
}

double ExpertUsage::top_share(int layer, int n) const {
  const uint64_t all = layer_total(layer);
  if (all == 0) return 0.0;
  const auto ids = ranked_in_layer(layer);
  uint64_t top = 0;
  for (int k = 0; k < n && k < static_cast<int>(ids.size()); ++k) top += row(layer)[ids[k]];
  return double(top) / double(all);
}

}  // namespace glmrt
