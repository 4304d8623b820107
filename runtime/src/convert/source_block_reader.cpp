#include "source_block_reader.h"

#include <fcntl.h>
#include <glmrt/base/error.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <glmrt/model_files/file_io.h>

namespace glmrt {
namespace {

constexpr uint64_t kDirectAlignment = 4096;
constexpr int kNotOpened = -2;

}  // namespace

SourceBlockReader::SourceBlockReader(const TensorDirectory& dir, uint64_t max_block_bytes)
    : dir_(dir),
      capacity_(max_block_bytes + 2 * kDirectAlignment),
      direct_fds_(dir.files().size(), kNotOpened) {
  for (auto& b : buffers_) b = HugePageBlock(capacity_, nullptr, "convert source blocks");
}

SourceBlockReader::~SourceBlockReader() {
  for (int fd : direct_fds_)
    if (fd >= 0) model_files::close_fd(fd);
}

int SourceBlockReader::direct_fd(size_t file_index) {
  int& fd = direct_fds_.at(file_index);
  if (fd == kNotOpened) {
    do {
      fd = ::open(dir_.files().at(file_index).c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) fd = -1;
  }
  return fd;
}

std::span<const std::byte> SourceBlockReader::read(int slot, const TensorInfo& t, uint64_t offset,
                                                   uint64_t size) {
  if (slot < 0 || slot >= kSlots || offset + size > t.byte_size)
    fail("SourceBlockReader::read: bytes [{}, {}) of tensor '{}' ({} bytes) into slot {}", offset,
         offset + size, t.name, t.byte_size, slot);
  const uint64_t begin = t.offset + offset, end = begin + size;
  const int fd = direct_fd(t.file_index);
  if (fd < 0) return read_buffered(slot, t, begin, size);
  const uint64_t window = begin / kDirectAlignment * kDirectAlignment;
  const uint64_t window_end = (end + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
  if (window_end - window > capacity_)
    fail("SourceBlockReader::read: {} bytes of '{}' exceed the {} byte buffer", size, t.name,
         capacity_);
  std::byte* data = buffers_[slot].data();
  const uint64_t need = end - window;
  uint64_t done = 0;
  while (done < need) {
    const ssize_t n =
        ::pread(fd, data + done, window_end - window - done, static_cast<off_t>(window + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && done == 0) {
      // The filesystem takes O_DIRECT opens but not its reads: buffered from now on.
      model_files::close_fd(fd);
      direct_fds_.at(t.file_index) = -1;
      direct_ = false;
      return read_buffered(slot, t, begin, size);
    }
    if (n < 0)
      fail("reading tensor '{}' from {} at byte {} failed: {}", t.name,
           dir_.files().at(t.file_index), window + done, std::strerror(errno));
    done += static_cast<uint64_t>(n);
    // O_DIRECT reads stop short only at the end of the file.
    if (n == 0 || (done < need && done % kDirectAlignment != 0))
      fail(
          "{} ends at byte {} while reading tensor '{}' (expected bytes up to {}); was the file "
          "truncated after it was opened?",
          dir_.files().at(t.file_index), window + done, t.name, end);
  }
  return {data + (begin - window), size};
}

std::span<const std::byte> SourceBlockReader::read_buffered(int slot, const TensorInfo& t,
                                                            uint64_t begin, uint64_t size) {
  direct_ = false;
  const std::span<std::byte> out(buffers_[slot].data(), size);
  const int fd = dir_.fd(t.file_index);
  model_files::pread_exact(fd, begin, out, dir_.files().at(t.file_index),
                           fmt::format("tensor '{}'", t.name));
  // Read once: the bytes leave the page cache to others.
  ::posix_fadvise(fd, static_cast<off_t>(begin), static_cast<off_t>(size), POSIX_FADV_DONTNEED);
  return out;
}

}  // namespace glmrt
