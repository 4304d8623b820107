// Sees the router's choices of every MoE step as they are made (usage
// history, routing traces). Called on the thread running the forward pass.
#pragma once

#include <cstdint>
#include <span>

namespace glmrt {

class RoutingObserver {
 public:
  virtual ~RoutingObserver() = default;
  /// One step of expert-store row `layer` routed `positions` positions;
  /// `experts` holds each position's chosen ids (position-major, top-k each).
  virtual void on_routed(int layer, int64_t positions, std::span<const int32_t> experts) = 0;
};

}  // namespace glmrt
