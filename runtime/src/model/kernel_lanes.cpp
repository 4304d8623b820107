#include <glmrt/model/kernel_lanes.h>

#include <omp.h>

#include <algorithm>
#include <exception>

namespace glmrt {

void for_each_on_lanes(KernelLanes lanes, plugin::Kernels& kernels, int64_t n,
                       const LaneTask& task) {
  if (lanes.size() < 2 || n < 2) {
    for (int64_t i = 0; i < n; ++i) task(kernels, 0, i);
    return;
  }
  std::exception_ptr error;
  const int threads = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(lanes.size()), n));
#pragma omp parallel for num_threads(threads) schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) {
    const int lane = omp_get_thread_num();
    try {
      task(*lanes[static_cast<size_t>(lane)], lane, i);
    } catch (...) {
#pragma omp critical(glmrt_kernel_lanes_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace glmrt
