// A layer's routed experts for a step: each distinct expert run once for all
// the positions that chose it, as the expert store hands it over, and each
// position's weighted sum. Needs no attention or cache, so a process that
// runs experts only (a rank of expert parallelism) computes with it too.
#pragma once

#include <glmrt/experts/expert_store.h>
#include <glmrt/model/activation_observer.h>
#include <glmrt/model/moe_scratch.h>
#include <glmrt/model/router.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/weights/kernels_backend.h>

#include <functional>
#include <span>
#include <vector>

namespace glmrt {

/// Every position's chosen experts with their weights, ascending by expert id
/// (the order the reference sums them in). A position may hold none.
using PositionRouting = std::vector<std::vector<RoutedExpert>>;

/// What computing one layer's routed experts works with.
struct RoutedExpertsCall {
  const ModelConfig& config;
  KernelsBackend& kernels;
  ExpertStore& experts;
  MoeScratch& scratch;
  int layer;                                  // expert-store row
  ActivationObserver* activations = nullptr;  // sees each expert product's input rows
};

/// What the experts in memory gave before the rest arrived: each position's
/// weighted sum over the experts that have run [S, hidden] (the rest count 0).
using RoutedSoFar = std::function<void(std::span<const float> routed_so_far)>;

/// out[s] = sum over routing[s], in its order, of weight x expert(x[s]) for
/// the S = routing.size() rows of x [S, hidden]; zeros for a position with
/// no experts. `reads_queued` (may be empty) runs once the step's reads are
/// submitted and the experts in memory have run, with their sum so far
/// (held in `out` until the end). Returns the seconds spent in the experts'
/// matrix products.
double routed_expert_sum(const RoutedExpertsCall& call, std::span<const float> x,
                         const PositionRouting& routing, std::span<float> out,
                         const RoutedSoFar& reads_queued);

}  // namespace glmrt
