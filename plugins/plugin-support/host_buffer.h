// Memory borrowed from the host's allocator, so the process memory budget sees
// it; returned when its owner dies. Every in-tree plugin takes its host memory
// through this one class (scratch buffers, and HostArray's elements).
#pragma once

#include <glmrt/plugin/host_services.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace glmrt::plugin_support {

class HostBuffer {
 public:
  /// Sizes are rounded up to a multiple of `granule`, so that a buffer asked
  /// for slowly growing sizes (S = 1, 2, 3, ...) is not reallocated each time.
  explicit HostBuffer(const glmrt_host_services& host, size_t granule = 1) noexcept
      : host_(host), granule_(granule > 0 ? granule : 1) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { release(); }

  /// Makes the buffer at least `bytes` long (contents are not kept); false
  /// when the host refuses the memory.
  bool reserve(size_t bytes) noexcept {
    if (bytes <= capacity_) return true;
    release();
    if (bytes > SIZE_MAX - (granule_ - 1)) return false;
    const size_t rounded = (bytes + granule_ - 1) / granule_ * granule_;
    data_ = host_.alloc(host_.context, rounded, kAlignment);
    if (!data_) return false;
    capacity_ = rounded;
    return true;
  }
  /// Exchanges the memory with a buffer of the same host.
  void swap(HostBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
    std::swap(granule_, other.granule_);
  }

  size_t capacity() const noexcept { return capacity_; }
  std::byte* data() const noexcept { return static_cast<std::byte*>(data_); }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  static constexpr size_t kAlignment = 64;

  void release() noexcept {
    if (data_) host_.free(host_.context, data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  const glmrt_host_services& host_;
  size_t granule_;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace glmrt::plugin_support
