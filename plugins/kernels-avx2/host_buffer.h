// Scratch memory borrowed from the host's alloc service, so the process memory
// budget sees it. Grows on demand; returned when the kernels object dies.
#pragma once

#include <glmrt/plugin/host_services.h>

#include <cstddef>

namespace glmrt::kernels_avx2 {

class HostBuffer {
 public:
  explicit HostBuffer(const glmrt_host_services* host) : host_(host) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { release(); }

  /// Makes the buffer hold at least `bytes` (old contents are not kept);
  /// false when the host refuses the allocation.
  bool ensure(size_t bytes) {
    if (bytes <= capacity_) return true;
    release();
    // Round up so slowly growing shapes (S = 1, 2, 3, ...) do not reallocate
    // on every call.
    const size_t rounded = (bytes + kGranule - 1) / kGranule * kGranule;
    data_ = host_->alloc(host_->context, rounded, kAlignment);
    if (!data_) return false;
    capacity_ = rounded;
    return true;
  }

  std::byte* data() const { return static_cast<std::byte*>(data_); }

 private:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kGranule = 64 * 1024;

  void release() {
    if (data_) host_->free(host_->context, data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  const glmrt_host_services* host_;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

/// Hands out 64-byte aligned slices of one HostBuffer: first plan every slice
/// (add), then ensure() the total once, then take the pointers (at).
class ScratchPlan {
 public:
  /// Reserves `bytes` and returns the slice's offset.
  size_t add(size_t bytes) {
    const size_t offset = total_;
    total_ += (bytes + 63) / 64 * 64;
    return offset;
  }
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

}  // namespace glmrt::kernels_avx2
