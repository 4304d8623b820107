#include <fcntl.h>
#include <glmrt/base/error.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace glmrt {

struct StreamedFileWriter::HashState {
  XXH3_state_t* state = XXH3_createState();
  HashState() { XXH3_64bits_reset(state); }
  ~HashState() { XXH3_freeState(state); }
  HashState(const HashState&) = delete;
  HashState& operator=(const HashState&) = delete;
};

StreamedFileWriter::StreamedFileWriter(const std::filesystem::path& path, uint64_t size)
    : file_(path), size_(size), hash_(std::make_unique<HashState>()) {
  constexpr uint64_t a = OutputFile::kDirectAlignment;
  file_.reserve((size + a - 1) / a * a);
  for (auto& b : buffers_) b = AlignedBlock(kBufferBytes, a);
}

StreamedFileWriter::~StreamedFileWriter() {
  if (pending_.valid()) pending_.wait();
}

void StreamedFileWriter::wait_write() {
  if (!pending_.valid()) return;
  const std::string error = pending_.get();
  if (!error.empty()) fail("{}", error);
}

void StreamedFileWriter::flush_buffer() {
  constexpr uint64_t a = OutputFile::kDirectAlignment;
  wait_write();
  // O_DIRECT writes whole blocks: the last buffer goes out zero-padded and
  // finish() cuts the file back.
  const size_t padded = (filled_ + a - 1) / a * a;
  std::byte* data = buffers_[current_].data();
  std::memset(data + filled_, 0, padded - filled_);
  // Hashed on the writing thread, off the encoders' path; the writes (and so
  // the hash updates) still go one after another, in file order.
  pending_ =
      std::async(std::launch::async, [this, data, padded, filled = filled_, at = buffer_start_] {
        XXH3_64bits_update(hash_->state, data, filled);
        return file_.write_at(at, data, padded);
      });
  buffer_start_ += filled_;
  current_ ^= 1;
  filled_ = 0;
}

void StreamedFileWriter::append(std::span<const std::byte> bytes) {
  if (position_ + bytes.size() > size_)
    fail("{}: {} bytes appended past the planned size {}", file_.path(), position_ + bytes.size(),
         size_);
  position_ += bytes.size();
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kBufferBytes - filled_);
    std::memcpy(buffers_[current_].data() + filled_, bytes.data(), n);
    filled_ += n;
    bytes = bytes.subspan(n);
    if (filled_ == kBufferBytes) flush_buffer();
  }
}

void StreamedFileWriter::pad_to(uint64_t offset) {
  const std::array<std::byte, 4096> zeros{};
  if (offset < position_) fail("{}: padding back to {} from {}", file_.path(), offset, position_);
  while (position_ < offset)
    append(std::span(zeros).first(std::min<uint64_t>(zeros.size(), offset - position_)));
}

uint64_t StreamedFileWriter::finish() {
  if (position_ != size_)
    fail("{}: {} bytes written, the plan says {}", file_.path(), position_, size_);
  if (filled_) flush_buffer();
  wait_write();
  file_.finish(size_);
  return XXH3_64bits_digest(hash_->state);
}

}  // namespace glmrt
