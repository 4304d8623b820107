// The host's side of the io contract on alignment: every byte range it wants
// is widened to the plugin's alignment (offset down, length up) before the
// plugin sees it, and near the end of a file the widened read is allowed to
// stop at the end (a short read the host expects, never an error).
#pragma once

#include <cstdint>

namespace glmrt {

struct WidenedRead {
  uint64_t offset = 0;  // the wanted offset rounded down to the alignment
  uint64_t length = 0;  // covers the wanted bytes, rounded up to the alignment
  uint64_t lead = 0;    // wanted bytes start this far into the read (offset + lead)
  /// Bytes the plugin must deliver: length, or up to the end of the file when
  /// the widened read runs past it.
  uint64_t expected = 0;
};

/// Widens [offset, offset + length) of a file of `file_size` bytes to
/// `alignment` (a power of two; 1 = no widening). Throws glmrt::Error when
/// the wanted range does not lie inside the file or the alignment is not a
/// power of two.
WidenedRead widen_read(uint64_t offset, uint64_t length, uint32_t alignment, uint64_t file_size);

/// `value` rounded up to a multiple of `alignment` (a power of two).
constexpr uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace glmrt
