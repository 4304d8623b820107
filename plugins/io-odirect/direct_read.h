// Reading one extent through a file's O_DIRECT twin descriptor: a read the
// drive answers short is continued (through the page-cache descriptor when
// the remainder no longer starts on a block boundary), a file that stops
// growing before its known end is retried a few times and then reported
// naming file and offset, EIO is an error. Free of the plugin object so the
// tests can drive it with a pread that misbehaves on purpose.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace glmrt::io_odirect {

/// pread's signature; ::pread in the plugin, a fake in tests.
using PreadFn = ssize_t (*)(int fd, void* buffer, size_t count, off_t offset);

/// One file of the set: both descriptors and what is known of it.
struct FileTwins {
  std::string path;
  int direct_fd = -1;    // O_DIRECT, or -1 when the filesystem refuses it
  int buffered_fd = -1;  // through the page cache
  uint64_t size = 0;     // when opened: a read that stops before this is short
};

struct ExtentRead {
  uint64_t bytes = 0;  // placed at the destination
  bool ok = true;
  std::string error;  // names file and offset when !ok
  /// O_DIRECT was refused at read time (EINVAL on an aligned request): the
  /// caller switches the file to buffered reads and warns once.
  bool direct_refused = false;
};

/// How many times a read that delivers nothing before the file's known end
/// is tried again before it is reported.
inline constexpr int kShortReadRetries = 3;

/// Reads `length` bytes at `offset` of `file` into `destination`, stopping at
/// the end of the file (bytes < length, ok). `alignment`: what O_DIRECT needs
/// of offset, length and destination; a piece that does not meet it goes
/// through the buffered descriptor. `use_direct` false reads buffered only.
ExtentRead read_extent_fully(const FileTwins& file, uint64_t offset, uint64_t length,
                             std::byte* destination, uint32_t alignment, bool use_direct,
                             PreadFn pread_fn);

}  // namespace glmrt::io_odirect
