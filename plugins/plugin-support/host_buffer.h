// A grow-only scratch buffer borrowed from the host's allocator, so the
// host's memory budget sees it; returned when its owner dies.
#pragma once

#include <glmrt/plugin/host_services.h>

#include <cstddef>

namespace glmrt::plugin_support {

class HostBuffer {
 public:
  explicit HostBuffer(const glmrt_host_services& host) : host_(host) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { release(); }

  /// Makes the buffer at least `bytes` long (contents are not kept); false
  /// when the host refuses the memory.
  bool reserve(size_t bytes) noexcept {
    if (bytes <= capacity_) return true;
    release();
    data_ = host_.alloc(host_.context, bytes, 64);
    if (!data_) return false;
    capacity_ = bytes;
    return true;
  }

  std::byte* data() const noexcept { return static_cast<std::byte*>(data_); }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  void release() noexcept {
    if (data_) host_.free(host_.context, data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  const glmrt_host_services& host_;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace glmrt::plugin_support
