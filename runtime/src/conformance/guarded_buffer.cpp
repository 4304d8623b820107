#include "guarded_buffer.h"

#include <glmrt/base/error.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace glmrt::conformance {

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_pages = (bytes + page - 1) / page;
  mapping_bytes_ = (data_pages + 1) * page;
  mapping_ =
      mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    fail("conformance: cannot map {} bytes: {}", mapping_bytes_, std::strerror(errno));
  }
  std::byte* guard = static_cast<std::byte*>(mapping_) + data_pages * page;
  if (mprotect(guard, page, PROT_NONE) != 0) {
    munmap(mapping_, mapping_bytes_);
    mapping_ = nullptr;
    fail("conformance: cannot protect the guard page: {}", std::strerror(errno));
  }
  data_ = guard - bytes;
}

GuardedBuffer::~GuardedBuffer() {
  if (mapping_) munmap(mapping_, mapping_bytes_);
}

}  // namespace glmrt::conformance
