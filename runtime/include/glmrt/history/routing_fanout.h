// Shows each MoE step's routing to every observer added (usage history, a
// routing trace), in the order they were added.
#pragma once

#include <glmrt/model/routing_observer.h>

#include <algorithm>
#include <vector>

namespace glmrt {

class RoutingFanout : public RoutingObserver {
 public:
  void add(RoutingObserver* observer) { observers_.push_back(observer); }
  void remove(RoutingObserver* observer) {
    observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
  }
  bool empty() const { return observers_.empty(); }
  void on_routed(int layer, int64_t positions, std::span<const int32_t> experts) override {
    for (RoutingObserver* o : observers_) o->on_routed(layer, positions, experts);
  }

 private:
  std::vector<RoutingObserver*> observers_;
};

}  // namespace glmrt
