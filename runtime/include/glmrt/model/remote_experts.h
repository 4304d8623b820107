// The routed experts other processes run (expert parallelism over MPI, see
// docs/distributed.md): a step's hidden states and routing go out, their
// weighted sums come back. A model without one runs every expert itself and
// pays nothing for the possibility.
#pragma once

#include <glmrt/model/routed_experts.h>

#include <cstdint>
#include <span>

namespace glmrt {

class RemoteExperts {
 public:
  virtual ~RemoteExperts() = default;

  /// Whether this process runs expert `expert` of store row `layer` itself.
  virtual bool runs_here(int layer, int32_t expert) const = 0;
  /// Starts one MoE step of `layer`: the normed hidden states x [S, hidden]
  /// and every position's routing go to the processes that own a chosen
  /// expert, with the experts store row `next_layer` is predicted to use
  /// (`next_layer` -1: none), so they read ahead as this process does.
  virtual void send_step(int layer, std::span<const float> x, const PositionRouting& routing,
                         int next_layer, std::span<const int32_t> next_predicted) = 0;
  /// Asks the processes that own some of `predicted` (experts of store row
  /// `layer`) to read them ahead; no answer is awaited.
  virtual void prefetch(int layer, std::span<const int32_t> predicted) = 0;
  /// Waits for the step's answers and adds each process's sums into
  /// out [S, hidden], process by process in rank order (deterministic).
  /// Throws glmrt::Error naming the process that did not answer in time.
  virtual void add_results(std::span<float> out) = 0;
};

}  // namespace glmrt
