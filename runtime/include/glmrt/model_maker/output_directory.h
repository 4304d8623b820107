// Writing a model folder so that a partial one is never taken for a whole
// one: everything goes into DIR.partial, config.json last, and the folder is
// renamed to DIR at the end (make-model, convert).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace glmrt {

/// fsync of a file or folder; throws naming it.
void sync_path(const std::filesystem::path& path);
/// Creates `path` (which must not exist) holding `text`, synced.
void write_small_file(const std::filesystem::path& path, const std::string& text);
/// Throws when `dir`'s filesystem has fewer than `needed` bytes free, saying
/// what `what` takes and what is free.
void check_free_space(const std::filesystem::path& dir, uint64_t needed, const std::string& what);

/// DIR.partial: created on construction; removed on destruction unless
/// renamed to its destination, or kept for a later run to resume.
class PartialDirectory {
 public:
  explicit PartialDirectory(std::filesystem::path path);
  ~PartialDirectory();
  PartialDirectory(const PartialDirectory&) = delete;
  PartialDirectory& operator=(const PartialDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Leaves the folder in place whatever happens next (resumable work).
  void keep() { keep_ = true; }
  /// Syncs the folder, renames it to `out` and syncs out's parent.
  void rename_to(const std::filesystem::path& out);

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace glmrt
