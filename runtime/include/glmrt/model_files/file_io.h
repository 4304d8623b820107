// Read-only file access for model files: open with O_CLOEXEC, size, and
// positioned reads that either fill the whole buffer or throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace glmrt::model_files {

/// Opens `file` read-only with O_CLOEXEC; throws naming the file and errno
/// text, or when it is not a regular file (a FIFO is refused, never waited on).
int open_read_only(const std::filesystem::path& file);

/// Closes a descriptor obtained from open_read_only; -1 is ignored.
void close_fd(int fd) noexcept;

/// Size in bytes of the open file.
uint64_t file_size(int fd, const std::filesystem::path& file);

/// Fills `dst` from byte `offset` of the file, retrying on EINTR and short
/// reads. `what` names the data being read (a tensor, the header) for errors.
void pread_exact(int fd, uint64_t offset, std::span<std::byte> dst,
                 const std::filesystem::path& file, std::string_view what);

/// The whole content of a file through the bounded reader (base/input_file.h)
/// with the loosest cap; kept for convert's callers, which should name their
/// kind with read_input_file instead.
std::string read_whole_file(const std::filesystem::path& file);

}  // namespace glmrt::model_files
