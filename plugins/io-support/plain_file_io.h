// The file set of an io plugin that reads every file through one ordinary
// descriptor (io-buffered, fault-io): opened read-only, prefetched with
// posix_fadvise(WILLNEED). It sits between QueuedIo and the plugin, which
// declares its queue itself: members of the plugin go before those of its
// bases, so the queue's workers stop before these files close.
#pragma once

#include "open_file.h"
#include "queued_io.h"

#include <fcntl.h>

#include <string>
#include <vector>

namespace glmrt::io_support {

template <typename Self>
class PlainFileIo : public QueuedIo<Self> {
 protected:
  PlainFileIo() = default;
  ~PlainFileIo() = default;

  const OpenFile& file(size_t index) const { return files_[index]; }

 private:
  friend class QueuedIo<Self>;
  size_t file_count() const { return files_.size(); }
  const std::string& file_path(size_t index) const { return files_[index].path(); }
  glmrt_status open_file_set(const char* const* paths, int32_t n_paths, std::string& error) {
    return open_read_only(Self::kName, paths, n_paths, files_, error);
  }
  void prefetch_extent(size_t index, const glmrt_extent& extent) noexcept {
    ::posix_fadvise(files_[index].fd(), static_cast<off_t>(extent.offset),
                    static_cast<off_t>(extent.length), POSIX_FADV_WILLNEED);
  }

  std::vector<OpenFile> files_;
};

}  // namespace glmrt::io_support
