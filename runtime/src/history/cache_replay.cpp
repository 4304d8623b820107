#include <glmrt/base/error.h>
#include <glmrt/history/cache_replay.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <memory>
#include <set>

namespace glmrt {
namespace {

/// A per-layer LRU of expert ids (O(1) lookups through `where`).
class LruSet {
 public:
  LruSet(int experts, int64_t capacity)
      : capacity_(capacity), where_(static_cast<size_t>(experts), order_.end()) {}
  // `where_` points into this object's own list.
  LruSet(const LruSet&) = delete;
  LruSet& operator=(const LruSet&) = delete;
  /// True on a hit (then most recently used); on a miss inserts, evicting.
  bool access(int32_t id) {
    auto& at = where_[static_cast<size_t>(id)];
    if (at != order_.end()) {
      order_.splice(order_.begin(), order_, at);
      return true;
    }
    if (capacity_ <= 0) return false;
    if (static_cast<int64_t>(order_.size()) >= capacity_) {
      where_[static_cast<size_t>(order_.back())] = order_.end();
      order_.pop_back();
    }
    order_.push_front(id);
    at = order_.begin();
    return false;
  }

 private:
  int64_t capacity_;
  std::list<int32_t> order_;  // most recently used first
  std::vector<std::list<int32_t>::iterator> where_;
};

/// One LruSet per layer (built in place: they cannot be copied).
std::vector<std::unique_ptr<LruSet>> lru_per_layer(int layers, int experts, int64_t capacity) {
  std::vector<std::unique_ptr<LruSet>> sets;
  for (int l = 0; l < layers; ++l) sets.push_back(std::make_unique<LruSet>(experts, capacity));
  return sets;
}

/// Layers the requests use: a layer with no routed experts (dense, or an
/// MTP layer that never ran) has no cache, so it brings no slots either.
int64_t active_layers(const std::vector<CacheRequest>& requests, int layers) {
  std::vector<uint8_t> seen(static_cast<size_t>(layers), 0);
  for (const CacheRequest& r : requests) seen[static_cast<size_t>(r.layer)] = 1;
  return std::count(seen.begin(), seen.end(), 1);
}

void check_shape(int layers, int experts, int per_layer) {
  if (layers <= 0 || experts <= 0 || per_layer < 0)
    fail("cache replay: bad shape ({} layers, {} experts, {} per layer)", layers, experts,
         per_layer);
}

}  // namespace

std::vector<CacheRequest> cache_requests(const RoutingTrace& trace) {
  std::vector<CacheRequest> requests;
  requests.reserve(trace.steps.size());
  for (const RoutingStep& step : trace.steps) {
    CacheRequest r{step.layer, step.experts};
    std::sort(r.ids.begin(), r.ids.end());
    r.ids.erase(std::unique(r.ids.begin(), r.ids.end()), r.ids.end());
    requests.push_back(std::move(r));
  }
  return requests;
}

ReplayResult replay_lru(const std::vector<CacheRequest>& requests, int layers, int experts,
                        int per_layer) {
  check_shape(layers, experts, per_layer);
  const auto caches = lru_per_layer(layers, experts, per_layer);
  ReplayResult result;
  for (const CacheRequest& r : requests)
    for (int32_t id : r.ids) (caches[r.layer]->access(id) ? result.hits : result.misses)++;
  return result;
}

ReplayResult replay_lfu(const std::vector<CacheRequest>& requests, int layers, int experts,
                        int per_layer) {
  check_shape(layers, experts, per_layer);
  ReplayResult result;
  std::vector<std::vector<uint64_t>> freq(static_cast<size_t>(layers),
                                          std::vector<uint64_t>(static_cast<size_t>(experts)));
  // Per layer: cached ids ordered by (frequency, last use) so the least
  // frequent, then least recent, goes first.
  using Key = std::tuple<uint64_t, uint64_t, int32_t>;
  std::vector<std::set<Key>> cached(static_cast<size_t>(layers));
  std::vector<std::vector<uint64_t>> last(static_cast<size_t>(layers),
                                          std::vector<uint64_t>(static_cast<size_t>(experts)));
  std::vector<std::vector<uint8_t>> present(static_cast<size_t>(layers),
                                            std::vector<uint8_t>(static_cast<size_t>(experts)));
  uint64_t clock = 0;
  for (const CacheRequest& r : requests) {
    auto& f = freq[r.layer];
    auto& c = cached[r.layer];
    auto& t = last[r.layer];
    auto& in = present[r.layer];
    for (int32_t id : r.ids) {
      ++clock;
      if (in[id]) {
        ++result.hits;
        c.erase({f[id], t[id], id});
      } else {
        ++result.misses;
        if (per_layer == 0) {
          ++f[id];
          t[id] = clock;
          continue;
        }
        if (static_cast<int>(c.size()) >= per_layer) {
          in[std::get<2>(*c.begin())] = 0;
          c.erase(c.begin());
        }
        in[id] = 1;
      }
      ++f[id];
      t[id] = clock;
      c.insert({f[id], t[id], id});
    }
  }
  return result;
}

ReplayResult replay_belady(const std::vector<CacheRequest>& requests, int layers, int experts,
                           int per_layer, const std::vector<ExpertKey>& preload) {
  check_shape(layers, experts, per_layer);
  // One cache of layers x per_layer slots over every layer's experts: the
  // optimum for that much memory however it is split between layers (the
  // pinned set is chosen over all layers too). Keys are layer * experts + id.
  constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  std::vector<int64_t> seq;
  for (const CacheRequest& r : requests)
    for (int32_t id : r.ids) seq.push_back(int64_t{r.layer} * experts + id);
  const size_t keys = static_cast<size_t>(layers) * static_cast<size_t>(experts);
  std::vector<uint64_t> next(seq.size());
  std::vector<uint64_t> seen(keys, kNever);
  for (size_t i = seq.size(); i-- > 0;) {
    next[i] = seen[static_cast<size_t>(seq[i])];
    seen[static_cast<size_t>(seq[i])] = i;
  }
  const int64_t capacity = active_layers(requests, layers) * per_layer;
  std::set<std::pair<uint64_t, int64_t>> cache;  // (next use, key), furthest last
  std::vector<uint64_t> cached_next(keys, 0);
  std::vector<uint8_t> in(keys, 0);
  // A preloaded expert is next needed at its first use (`seen` now holds it).
  for (const ExpertKey& k : preload) {
    if (static_cast<int64_t>(cache.size()) >= capacity) break;
    if (k.layer < 0 || k.layer >= layers || k.expert < 0 || k.expert >= experts) continue;
    const auto key = static_cast<size_t>(int64_t{k.layer} * experts + k.expert);
    if (in[key]) continue;
    in[key] = 1;
    cached_next[key] = seen[key];
    cache.insert({seen[key], static_cast<int64_t>(key)});
  }
  ReplayResult result;
  for (size_t i = 0; i < seq.size(); ++i) {
    const auto key = static_cast<size_t>(seq[i]);
    if (in[key]) {
      ++result.hits;
      cache.erase({cached_next[key], seq[i]});
    } else {
      ++result.misses;
      if (capacity == 0) continue;
      if (static_cast<int64_t>(cache.size()) >= capacity) {
        const auto victim = std::prev(cache.end());
        // The newcomer needed last (or never again) passes through the slot
        // a step reads it into, as the store's waves do.
        if (victim->first <= next[i]) continue;
        in[static_cast<size_t>(victim->second)] = 0;
        cache.erase(victim);
      }
      in[key] = 1;
    }
    cached_next[key] = next[i];
    cache.insert({next[i], seq[i]});
  }
  return result;
}

std::vector<ExpertKey> choose_pinned(const ExpertUsage& learned, int64_t slots) {
  std::vector<ExpertKey> ranked = learned.ranked();
  if (static_cast<int64_t>(ranked.size()) > slots) ranked.resize(static_cast<size_t>(slots));
  return ranked;
}

ReplayResult replay_pinned_lru(const std::vector<CacheRequest>& requests, int layers, int experts,
                               int per_layer, const ExpertUsage& learned, double pinned_share) {
  check_shape(layers, experts, per_layer);
  const int64_t used_layers = std::max<int64_t>(active_layers(requests, layers), 1);
  const int64_t slots = used_layers * per_layer;
  const auto pinned_slots = static_cast<int64_t>(std::llround(pinned_share * double(slots)));
  std::vector<std::vector<uint8_t>> pinned(static_cast<size_t>(layers),
                                           std::vector<uint8_t>(static_cast<size_t>(experts)));
  int64_t used = 0;
  if (learned.layers() == layers && learned.experts() == experts)
    for (const ExpertKey& k : choose_pinned(learned, pinned_slots)) {
      pinned[k.layer][k.expert] = 1;
      ++used;
    }
  // What the pinned set does not use is LRU, shared evenly by the layers.
  const int64_t lru_slots = (slots - used) / used_layers;
  const auto caches = lru_per_layer(layers, experts, lru_slots);
  ReplayResult result;
  for (const CacheRequest& r : requests)
    for (int32_t id : r.ids) {
      if (pinned[r.layer][id]) {
        ++result.hits;
        ++result.pinned_hits;
      } else {
        (caches[r.layer]->access(id) ? result.hits : result.misses)++;
      }
    }
  return result;
}

}  // namespace glmrt
