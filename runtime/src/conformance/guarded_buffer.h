// A buffer whose last byte sits right before an inaccessible page, so a
// kernel that reads past the end of its weights or activations faults at once
// instead of silently using whatever lies beyond.
#pragma once

#include <cstddef>

namespace glmrt::conformance {

class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes);
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer();

  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace glmrt::conformance
