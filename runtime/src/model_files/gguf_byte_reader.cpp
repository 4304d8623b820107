#include "gguf_byte_reader.h"

#include <glmrt/base/error.h>
#include <glmrt/model_files/file_io.h>

#include <algorithm>
#include <cstring>

namespace glmrt::gguf {

namespace {
// Headers are read 64 KiB at a time: a tokenizer's metadata (MBs) in a few
// dozen reads, a tiny file in one.
constexpr uint64_t kGgufReadWindowBytes = 64 << 10;
}  // namespace

ByteReader::ByteReader(int fd, std::filesystem::path file, uint64_t file_size)
    : fd_(fd), file_(std::move(file)), file_size_(file_size) {}

void ByteReader::read(std::span<std::byte> dst, std::string_view what) {
  if (dst.size() > remaining()) {
    fail("{}: the file ends at byte {} inside {} ({} bytes needed from byte {}; truncated?)", file_,
         file_size_, what, dst.size(), position_);
  }
  size_t done = 0;
  while (done < dst.size()) {
    const uint64_t at = position_ + done;
    if (at < window_start_ || at >= window_start_ + window_.size()) {
      const uint64_t length = std::min(kGgufReadWindowBytes, file_size_ - at);
      window_.resize(length);
      model_files::pread_exact(fd_, at, window_, file_, what);
      window_start_ = at;
    }
    const size_t offset = at - window_start_;
    const size_t n = std::min(dst.size() - done, window_.size() - offset);
    std::memcpy(dst.data() + done, window_.data() + offset, n);
    done += n;
  }
  position_ += dst.size();
}

uint32_t ByteReader::u32(std::string_view what) {
  std::byte bytes[4];
  read(bytes, what);
  uint32_t v;
  std::memcpy(&v, bytes, sizeof v);  // the file and x86-64 are both little-endian
  return v;
}

uint64_t ByteReader::u64(std::string_view what) {
  std::byte bytes[8];
  read(bytes, what);
  uint64_t v;
  std::memcpy(&v, bytes, sizeof v);
  return v;
}

std::string ByteReader::string(std::string_view what, uint64_t max_bytes) {
  const uint64_t length = u64(what);
  if (length > max_bytes) {
    fail("{}: {} is {} bytes long, more than the {} bytes allowed (corrupt length?)", file_, what,
         length, max_bytes);
  }
  if (length > remaining()) {
    fail(
        "{}: {} is {} bytes long but only {} bytes of the file follow (truncated, or a "
        "corrupt length)",
        file_, what, length, remaining());
  }
  std::string text(length, '\0');
  read(std::as_writable_bytes(std::span(text)), what);
  return text;
}

}  // namespace glmrt::gguf
