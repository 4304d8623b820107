// Kernels objects that run side by side: one per thread, each created for a
// single thread, so independent small products (one query's heads in the
// absorbed form, the experts of a step) share one parallel region instead of
// forking and joining the team once per product. A kernels object is called
// by one thread at a time (plugin/kernels.h): lane t belongs to thread t.
#pragma once

#include <glmrt/plugin/kernels.h>

#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

using KernelLanes = std::span<plugin::Kernels* const>;

/// What runs item i with a kernels object and the lane's index (for the
/// caller's per-lane buffers).
using LaneTask = std::function<void(plugin::Kernels& kernels, int lane, int64_t i)>;

/// Calls task(kernels, lane, i) for every i in [0, n): spread over the lanes'
/// threads, each call with its thread's lane, when there are two lanes or
/// more and two items or more; else in order on this thread with `kernels`
/// and lane 0. The first exception a call throws is rethrown here.
void for_each_on_lanes(KernelLanes lanes, plugin::Kernels& kernels, int64_t n,
                       const LaneTask& task);

}  // namespace glmrt
