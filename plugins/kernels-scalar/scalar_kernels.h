// Portable reference kernels: every weight format of the v1 contract, decoded
// row by row in plain C++ and accumulated in double. The yardstick the
// vectorised plugins are measured against.
#pragma once

#include <glmrt/plugin/kernels.h>
#include <host_buffer.h>

#include <string>

namespace glmrt::kernels_scalar {

using plugin_support::HostBuffer;

class ScalarKernels final : public plugin::Kernels {
 public:
  explicit ScalarKernels(const glmrt_host_services& host) : host_(host), scratch_(host) {}

  bool supports(const glmrt_weight_format& format) const noexcept override;
  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override;
  glmrt_status grouped_matmul(const glmrt_matmul_product* products, size_t n) noexcept override;
  const char* last_error() const noexcept override { return error_.c_str(); }
  // The object was made with `new` in create(); this is its one owner.
  void destroy() noexcept override { delete this; }

 private:
  glmrt_status fail(glmrt_status status, std::string message) noexcept;
  /// The products of a matmul() or grouped_matmul() call, checked, then run.
  glmrt_status run(const glmrt_matmul_product* products, size_t n, const char* call) noexcept;

  const glmrt_host_services& host_;
  HostBuffer scratch_;  // one decoded row of f32 per thread
  std::string error_;
};

}  // namespace glmrt::kernels_scalar
