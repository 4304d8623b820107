// Several scratch arrays of one call in one HostBuffer: first plan every
// slice (add), then reserve() the total once, then take each slice at its
// offset from data(). Slices start 64-byte aligned, as the buffer does.
#pragma once

#include <cstddef>

namespace glmrt::plugin_support {

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

}  // namespace glmrt::plugin_support
