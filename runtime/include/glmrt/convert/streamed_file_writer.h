// Writes a file front to back from bytes appended in order: they collect in
// an aligned buffer that goes to the drive with O_DIRECT when full, while the
// next one fills (one write in flight beside the work that produces bytes),
// and are hashed (XXH3-64) on the way, so the file's checksum costs no second
// read. Memory: two buffers.
#pragma once

#include <glmrt/base/memory.h>
#include <glmrt/model_maker/output_file.h>

#include <glmrt/model_files/container_checksums.h>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>

#include <span>
#include <string>

namespace glmrt {

class StreamedFileWriter {
 public:
  static constexpr uint64_t kBufferBytes = 8u << 20;

  /// Creates `path` (it must not exist) and reserves `size` bytes: a disk
  /// without room fails here, naming the file.
  StreamedFileWriter(const std::filesystem::path& path, uint64_t size);
  ~StreamedFileWriter();
  StreamedFileWriter(const StreamedFileWriter&) = delete;
  StreamedFileWriter& operator=(const StreamedFileWriter&) = delete;

  void append(std::span<const std::byte> bytes);
  /// Appends zeros up to file position `offset`.
  void pad_to(uint64_t offset);
  uint64_t position() const { return position_; }
  /// Writes what is left, checks the size is the one reserved, syncs and
  /// closes; returns the XXH3-64 of the file's bytes.
  uint64_t finish();

 private:
  void flush_buffer();
  void wait_write();

  OutputFile file_;
  uint64_t size_;
  AlignedBlock buffers_[2];
  int current_ = 0;
  size_t filled_ = 0;
  uint64_t position_ = 0;      // bytes appended
  uint64_t buffer_start_ = 0;  // file offset of the current buffer
  std::future<std::string> pending_;
  struct HashState;
  std::unique_ptr<HashState> hash_;
};

}  // namespace glmrt
