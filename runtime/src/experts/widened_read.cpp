#include <glmrt/base/error.h>
#include <glmrt/experts/widened_read.h>

#include <algorithm>

namespace glmrt {

WidenedRead widen_read(uint64_t offset, uint64_t length, uint32_t alignment, uint64_t file_size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    fail("io alignment {} is not a power of two", alignment);
  if (offset > file_size || length > file_size - offset)
    fail("bytes {}..{} lie beyond the end of the file ({} bytes)", offset, offset + length,
         file_size);
  WidenedRead w;
  w.offset = offset & ~(uint64_t{alignment} - 1);
  w.lead = offset - w.offset;
  w.length = align_up(w.lead + length, alignment);
  w.expected = std::min(w.length, file_size - w.offset);
  return w;
}

}  // namespace glmrt
