// Replays a routing trace through expert-cache policies, each layer with its
// own cache as in the expert store, counting hits and misses per distinct
// expert of a step (the store reads each expert once per step):
//   LRU     least recently used goes first;
//   LFU     least often used so far (counts over the trace up to now) goes;
//   pinned  the experts most used in a *learning* history stay (a share of the
//           memory, chosen over all layers), the rest of the memory is LRU;
//   Belady  the expert needed furthest in the future goes, over one cache of
//           all the slots (any split between layers): the optimum for that
//           much memory, an upper bound for every policy here.
// Sizes are in experts per layer; every policy gets the same slots: size
// for each layer the trace routes in. Belady starts cold (each expert's
// first use is a miss); the pinned set is loaded before the trace starts, so
// on short traces pinned+LRU can pass it. Belady warm starts with every slot
// holding the learned history's most used experts: pinned+LRU starts with a
// subset of those, and an offline optimum never does worse from more, so it
// bounds pinned+LRU on traces of any length.
#pragma once

#include <glmrt/history/expert_usage.h>
#include <glmrt/history/routing_trace.h>

#include <cstdint>
#include <vector>

namespace glmrt {

/// One MoE step as the cache sees it: the distinct experts of one layer.
struct CacheRequest {
  int layer = 0;
  std::vector<int32_t> ids;  // distinct, ascending
};

std::vector<CacheRequest> cache_requests(const RoutingTrace& trace);

struct ReplayResult {
  uint64_t hits = 0, misses = 0;
  uint64_t pinned_hits = 0;  // pinned policy: the part of hits the pinned set served
  double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 0.0; }
};

ReplayResult replay_lru(const std::vector<CacheRequest>& requests, int layers, int experts,
                        int per_layer);
ReplayResult replay_lfu(const std::vector<CacheRequest>& requests, int layers, int experts,
                        int per_layer);
/// `preload`: experts in the cache before the first request (the first
/// layers x per_layer of them are used); empty = cold.
ReplayResult replay_belady(const std::vector<CacheRequest>& requests, int layers, int experts,
                           int per_layer, const std::vector<ExpertKey>& preload = {});

/// The pinned set a history gives for `slots` experts in all: the most used
/// experts over every layer (ExpertUsage::ranked order).
std::vector<ExpertKey> choose_pinned(const ExpertUsage& learned, int64_t slots);

/// Pinned + LRU in (layers the requests use) x per_layer slots: round(pinned_share x slots)
/// pinned from `learned`, the rest shared evenly by the layers' LRUs.
ReplayResult replay_pinned_lru(const std::vector<CacheRequest>& requests, int layers, int experts,
                               int per_layer, const ExpertUsage& learned, double pinned_share);

}  // namespace glmrt
