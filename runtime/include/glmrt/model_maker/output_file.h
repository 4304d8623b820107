// A file being written for a model folder (make-model, convert): created new
// (O_EXCL), written with O_DIRECT where the filesystem allows it (the pace is
// the drive's and the page cache is left to others), buffered elsewhere;
// errors name the file, the byte and the system's reason (disk full, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace glmrt {

class OutputFile {
 public:
  /// Block size and memory alignment of O_DIRECT writes.
  static constexpr uint64_t kDirectAlignment = 4096;

  /// Creates `path`, which must not exist.
  explicit OutputFile(const std::filesystem::path& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Thread-safe (pwrite): empty when it worked, else the error. With
  /// O_DIRECT, `offset`, `size` and `data` must be multiples of kDirectAlignment.
  std::string write_at(uint64_t offset, const std::byte* data, size_t size) const;
  /// Reserves the file's blocks up front: O_DIRECT writes into allocated
  /// blocks run in parallel, while writes that allocate take the inode's lock
  /// one at a time (ext4: 1.7 GB/s against 1.1 GB/s with two writers). A disk
  /// without room fails here, naming the file.
  void reserve(uint64_t bytes) const;
  /// Cuts what the last aligned request wrote past the end, syncs, closes.
  void finish(uint64_t bytes);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace glmrt
