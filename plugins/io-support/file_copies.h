// Several copies of the model's files, one per drive (`mirrors` in an io
// plugin's settings): where each file of the set lives in every copy, the
// check at open that a copy is the same file (size and header), and the
// router that sends each read to the least busy copy under its own read cap.
// Copy 0 is always the file set the host opened; mirrors add copies 1..N.
#pragma once

#include "byte_rate_limit.h"
#include "io_settings.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::io_support {

/// Every copy's path of every file, and each copy's read cap (0 = none).
struct CopyLayout {
  std::vector<std::string> folders;             // [copy]: the folder it mirrors the set from
  std::vector<std::vector<std::string>> paths;  // [copy][file]
  std::vector<uint64_t> caps;                   // [copy]
};

/// The set's own folder (the deepest one holding every path) as copy 0, then
/// one copy per mirror: file F at MIRROR / (F relative to that folder). A
/// mirror naming the set's own folder sets copy 0's cap instead of adding a
/// copy; one named twice, or a set with no common folder, is an error
/// (false with `error` = "PLUGIN: why").
bool lay_out_copies(std::string_view plugin, const std::vector<std::string>& paths,
                    const std::vector<MirrorEntry>& mirrors, CopyLayout& layout,
                    std::string& error);

/// Empty when the file open as `copy_fd` has the size and the header of the
/// one open as `original_fd` (a safetensors header whole, else the first 64
/// KiB); else what differs, naming both paths.
std::string check_same_file(std::string_view plugin, const std::string& original_path,
                            int original_fd, const std::string& copy_path, int copy_fd);

/// Sends each read to the copy with the fewest bytes being read (ties: the
/// one that has read least), and holds a read of a capped copy until that copy's cap
/// allows its bytes. Thread-safe: the reader threads share one.
class CopyRouter {
 public:
  /// `caps`: each copy's (0 = none), each keeping `cap_credit` of credit.
  explicit CopyRouter(const std::vector<uint64_t>& caps,
                      ByteRateLimit::Clock::duration cap_credit = ByteRateLimit::kBurst);

  /// A read's claim on one copy; its end waits for the copy's cap, then
  /// releases the bytes and counts them.
  class Lease {
   public:
    Lease(CopyRouter& router, size_t copy, uint64_t bytes, ByteRateLimit::Clock::time_point due)
        : router_(&router), copy_(copy), bytes_(bytes), due_(due) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { router_->end(*this); }
    size_t copy() const { return copy_; }

   private:
    friend class CopyRouter;
    CopyRouter* router_;
    size_t copy_;
    uint64_t bytes_;
    ByteRateLimit::Clock::time_point due_;
  };
  /// Claims the least busy copy for a read of `bytes`.
  Lease begin(uint64_t bytes);

  size_t copies() const { return copies_.size(); }
  /// The copy begin() would choose now, claiming nothing (for hints).
  size_t least_busy() const;
  /// Bytes read from `copy` so far.
  uint64_t bytes_read(size_t copy) const;

 private:
  struct Copy {
    std::unique_ptr<ByteRateLimit> cap;  // null: none
    uint64_t in_flight = 0;
    uint64_t read = 0;
  };
  size_t least_busy_locked() const;
  void end(const Lease& lease) noexcept;

  mutable std::mutex mutex_;
  std::vector<Copy> copies_;
};

}  // namespace glmrt::io_support
