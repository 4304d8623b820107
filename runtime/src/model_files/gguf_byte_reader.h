// Sequential little-endian reads of a file's header through a small window
// of pread()s: every length is checked against what is left of the file
// before anything is allocated for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::gguf {

class ByteReader {
 public:
  ByteReader(int fd, std::filesystem::path file, uint64_t file_size);

  uint64_t position() const { return position_; }
  uint64_t remaining() const { return file_size_ - position_; }
  const std::filesystem::path& file() const { return file_; }

  /// Fills `dst`; throws naming the file and `what` when the file ends first.
  void read(std::span<std::byte> dst, std::string_view what);
  uint32_t u32(std::string_view what);
  uint64_t u64(std::string_view what);
  /// A length-prefixed string of at most `max_bytes` bytes.
  std::string string(std::string_view what, uint64_t max_bytes);

 private:
  int fd_;
  std::filesystem::path file_;
  uint64_t file_size_;
  uint64_t position_ = 0;
  std::vector<std::byte> window_;
  uint64_t window_start_ = 0;  // file offset of window_[0]
};

}  // namespace glmrt::gguf
