// A file written whole or not at all: the bytes go to a temporary file beside
// it (named after this process), and only a commit renames that over the
// file. Whatever goes wrong before (a full disk, an exception, a write error)
// leaves the old file as it was and removes the temporary.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

namespace glmrt {

class AtomicFile {
 public:
  /// Creates the temporary beside `file`. Refuses (glmrt::Error) a `file`
  /// that exists and is not a regular file: renaming over a device, a FIFO
  /// or a socket would replace it, never write into it.
  explicit AtomicFile(std::filesystem::path file);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary unless committed.
  ~AtomicFile();

  /// Appends `text`; throws naming the file and the system's reason.
  void write(std::string_view text);
  /// fsync, close, rename over the file, fsync of the folder. `before_rename`
  /// (tests) runs between the fsync and the rename; if it throws, nothing is renamed.
  void commit(const std::function<void()>& before_rename = {});

  const std::filesystem::path& file() const { return file_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  std::filesystem::path file_, temporary_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes `text` to `file` atomically with an AtomicFile. Throws
/// glmrt::Error naming the file; the old file is then untouched and the
/// temporary file removed.
void write_file_atomically(const std::filesystem::path& file, std::string_view text,
                           const std::function<void()>& before_rename = {});

}  // namespace glmrt
