// The kernels interface of ABI 1.2, frozen: what a plugin built before 1.3
// saw. tests/host builds a plugin against it to show a 1.3 host never calls
// past the end of its table.
//
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>
#include <glmrt/plugin/weight_format.h>

namespace glmrt::plugin {

/// Created by a GLMRT_PLUGIN_KERNELS plugin's create(). Thread-compatible:
/// the host calls it from one thread at a time; it parallelises inside using
/// the host's thread count.
class Kernels {
 public:
  /// True when matmul() accepts this weight format.
  virtual bool supports(const glmrt_weight_format& format) const noexcept = 0;

  /// y[S, O] = x[S, I] · Wᵀ. x is row-major with row stride I floats, y with row
  /// stride O floats. Each weight row is read once for all S rows.
  virtual glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                              float* y) noexcept = 0;

  /// Text of the most recent error of this object.
  virtual const char* last_error() const noexcept = 0;

  /// Releases the object (the plugin frees what it allocated).
  virtual void destroy() noexcept = 0;

 protected:
  ~Kernels() = default;  // never deleted through the interface
};

}  // namespace glmrt::plugin
