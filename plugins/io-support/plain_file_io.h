// The file set of an io plugin that reads every file through one ordinary
// descriptor (io-buffered, fault-io): opened read-only in every copy
// (`mirrors`, file_copies.h), prefetched with posix_fadvise(WILLNEED). It
// sits between QueuedIo and the plugin, which declares its queue itself:
// members of the plugin go before those of its bases, so the queue's workers
// stop before these files close.
#pragma once

#include "file_copies.h"
#include "open_file.h"
#include "queued_io.h"

#include <fcntl.h>

#include <memory>
#include <string>
#include <vector>

namespace glmrt::io_support {

template <typename Self>
class PlainFileIo : public QueuedIo<Self> {
 protected:
  explicit PlainFileIo(std::vector<MirrorEntry> mirrors = {},
                       ByteRateLimit::Clock::duration cap_credit = ByteRateLimit::kBurst)
      : mirrors_(std::move(mirrors)), cap_credit_(cap_credit) {}
  ~PlainFileIo() = default;

  /// File `index` of copy `copy` (0: the set the host opened).
  const OpenFile& file(size_t index, size_t copy = 0) const { return copies_[copy][index]; }
  /// Which copy each read goes to.
  CopyRouter& router() { return *router_; }

 private:
  friend class QueuedIo<Self>;
  size_t file_count() const { return copies_.empty() ? 0 : copies_[0].size(); }
  const std::string& file_path(size_t index) const { return copies_[0][index].path(); }
  glmrt_status open_file_set(const char* const* paths, int32_t n_paths, std::string& error) {
    std::vector<std::string> own;
    for (int32_t i = 0; i < n_paths; ++i) own.emplace_back(paths[i] ? paths[i] : "");
    CopyLayout layout;
    if (!lay_out_copies(Self::kName, own, mirrors_, layout, error))
      return GLMRT_ERR_INVALID_ARGUMENT;
    std::vector<std::vector<OpenFile>> copies(layout.paths.size());
    for (size_t c = 0; c < copies.size(); ++c) {
      std::vector<const char*> c_paths;
      for (const std::string& path : layout.paths[c]) c_paths.push_back(path.c_str());
      if (const glmrt_status s =
              open_read_only(Self::kName, c_paths.data(), n_paths, copies[c], error);
          s != GLMRT_OK)
        return s;
      if (c == 0) continue;
      for (size_t f = 0; f < copies[c].size(); ++f) {
        error = check_same_file(Self::kName, copies[0][f].path(), copies[0][f].fd(),
                                copies[c][f].path(), copies[c][f].fd());
        if (!error.empty()) return GLMRT_ERR_INVALID_ARGUMENT;
      }
    }
    copies_ = std::move(copies);
    router_ = std::make_unique<CopyRouter>(layout.caps, cap_credit_);
    return GLMRT_OK;
  }
  /// A hint for the copy a read would go to now.
  void prefetch_extent(size_t index, const glmrt_extent& extent) noexcept {
    ::posix_fadvise(copies_[router_->least_busy()][index].fd(), static_cast<off_t>(extent.offset),
                    static_cast<off_t>(extent.length), POSIX_FADV_WILLNEED);
  }

  std::vector<MirrorEntry> mirrors_;
  ByteRateLimit::Clock::duration cap_credit_;
  std::vector<std::vector<OpenFile>> copies_;  // [copy][file]
  std::unique_ptr<CopyRouter> router_;
};

}  // namespace glmrt::io_support
