// The ABI 1.1 io adapter the in-tree io plugins share, so that each keeps
// only what is its own: its file set, how it reads one extent (its
// ExtentReader, run by its ReadQueue) and how it prefetches one. The rest is
// the same for all and written once here: open_files' once-only check,
// submit's argument checks (urgent or not, ABI 1.6), wait's, poll's and
// cancel's errors onto last_error(),
// read() as submit + wait + a byte count per extent (a 1.0 read promises
// every byte), prefetch's extent filter.
//
// A plugin's Io is `class X final : public QueuedIo<X>` and provides
//   static constexpr const char* kName;  // "io-buffered": starts every message
//   ReadQueue& queue();  // its member, declared last: the workers stop first
//   size_t file_count() const;
//   const std::string& file_path(size_t file) const;
//   /// Opens the set (called once, with a valid path list); on failure sets
//   /// `error` and opens nothing.
//   glmrt_status open_file_set(const char* const* paths, int32_t n_paths,
//                              std::string& error);
//   /// An extent with bytes, of an open file.
//   void prefetch_extent(size_t file, const glmrt_extent& extent) noexcept;
//   uint32_t alignment() const noexcept override;
//   std::string read_extent(...) noexcept override;  // ExtentReader
// and may hide an injected short read from read()'s byte count (fault-io):
//   bool hides_short_read(uint64_t sequence) const;
#pragma once

#include "read_queue.h"

#include <glmrt/plugin/io.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace glmrt::io_support {

template <typename Self>
class QueuedIo : public plugin::Io, public ExtentReader {
 public:
  glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept final {
    try {
      if (opened_) {
        error_ = message("open_files was already called; it opens the file set once");
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
      if (n_paths < 0 || (n_paths > 0 && !paths)) {
        error_ = message("open_files got no path list");
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
      std::string error;
      const glmrt_status status = self().open_file_set(paths, n_paths, error);
      if (status != GLMRT_OK) {
        error_ = std::move(error);
        return status;
      }
      opened_ = true;
      return GLMRT_OK;
    } catch (const std::exception& e) {
      error_ = message("open_files: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  glmrt_status submit(const glmrt_extent* extents, int64_t n_extents, glmrt_extent_result* results,
                      glmrt_io_ticket* ticket) noexcept final {
    try {
      return submit_batch(extents, n_extents, results, ticket, nullptr, false);
    } catch (const std::exception& e) {
      error_ = message("submit: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  glmrt_status submit_urgent(const glmrt_extent* extents, int64_t n_extents,
                             glmrt_extent_result* results, glmrt_io_ticket* ticket) noexcept final {
    try {
      return submit_batch(extents, n_extents, results, ticket, nullptr, true);
    } catch (const std::exception& e) {
      error_ = message("submit_urgent: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  glmrt_status cancel(glmrt_io_ticket ticket, int64_t* cancelled) noexcept final {
    try {
      int64_t count = 0;
      std::string error;
      if (!self().queue().cancel(ticket, count, error)) {
        error_ = message(error);
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
      if (cancelled) *cancelled = count;
      return GLMRT_OK;
    } catch (const std::exception& e) {
      error_ = message("cancel: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  glmrt_status wait(glmrt_io_ticket ticket) noexcept final {
    try {
      std::string error;
      const glmrt_status status = self().queue().wait(ticket, error);
      if (status == GLMRT_ERR_CANCELLED)
        error_ = message("the ticket's extents not yet started were cancelled");
      else if (status != GLMRT_OK)
        error_ = error.empty() ? message("a read failed") : std::move(error);
      return status;
    } catch (const std::exception& e) {
      error_ = message("wait: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  glmrt_status poll(glmrt_io_ticket ticket, int32_t* complete) noexcept final {
    try {
      bool done = false;
      std::string error;
      if (!complete || !self().queue().poll(ticket, done, error)) {
        error_ = message(complete ? error : std::string("poll got no flag to set"));
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
      *complete = done ? 1 : 0;
      return GLMRT_OK;
    } catch (const std::exception& e) {
      error_ = message("poll: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  /// submit + wait. A failed read names its extent; an extent the file ends
  /// before is an error here, unless the plugin hides it on purpose.
  glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept final {
    try {
      std::vector<glmrt_extent_result> results(
          static_cast<size_t>(std::max<int64_t>(n_extents, 0)));
      glmrt_io_ticket ticket = 0;
      uint64_t first_sequence = 0;
      if (const glmrt_status s =
              submit_batch(extents, n_extents, results.data(), &ticket, &first_sequence, false);
          s != GLMRT_OK)
        return s;
      if (const glmrt_status status = wait(ticket); status != GLMRT_OK) {
        for (int64_t e = 0; e < n_extents; ++e) {
          if (results[static_cast<size_t>(e)].status == GLMRT_OK) continue;
          error_ += " (extent #" + std::to_string(e) + " of the batch)";
          break;
        }
        return status;
      }
      for (int64_t e = 0; e < n_extents; ++e) {
        const glmrt_extent& extent = extents[e];
        const uint64_t bytes = results[static_cast<size_t>(e)].bytes;
        if (bytes == extent.length ||
            self().hides_short_read(first_sequence + static_cast<uint64_t>(e)))
          continue;
        error_ = message(self().file_path(static_cast<size_t>(extent.file))) + " ends at byte " +
                 std::to_string(extent.offset + bytes) + ", before the " +
                 std::to_string(extent.length) + " bytes wanted at offset " +
                 std::to_string(extent.offset) + " (extent #" + std::to_string(e) +
                 " of the batch)";
        return GLMRT_ERR_IO;
      }
      return GLMRT_OK;
    } catch (const std::exception& e) {
      error_ = message("read: ") + e.what();
      return GLMRT_ERR_INTERNAL;
    }
  }

  void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept final {
    if (!extents) return;
    for (int64_t e = 0; e < n_extents; ++e) {
      const glmrt_extent& extent = extents[e];
      // A zero length would advise the whole rest of the file.
      if (extent.length == 0 || extent.file < 0 ||
          static_cast<size_t>(extent.file) >= self().file_count())
        continue;
      self().prefetch_extent(static_cast<size_t>(extent.file), extent);
    }
  }

  const char* last_error() const noexcept final { return error_.c_str(); }
  // The object was made with `new` in the plugin's create(); this is its one owner.
  void destroy() noexcept final { delete &self(); }

  /// No short read is hidden unless the plugin says otherwise.
  bool hides_short_read(uint64_t) const { return false; }

 protected:
  QueuedIo() = default;
  ~QueuedIo() = default;

  /// "io-buffered: " + what.
  static std::string message(const std::string& what) {
    return std::string(Self::kName) + ": " + what;
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }

  /// Empty when the extent names an open file and a destination.
  std::string check_extent(const glmrt_extent& extent, int64_t index) {
    const size_t n_files = self().file_count();
    if (extent.file < 0 || static_cast<size_t>(extent.file) >= n_files)
      return message("extent #" + std::to_string(index) + " names file " +
                     std::to_string(extent.file) + ", but " + std::to_string(n_files) +
                     " files are open");
    if (extent.length > 0 && !extent.destination)
      return message("extent #" + std::to_string(index) + " of " +
                     self().file_path(static_cast<size_t>(extent.file)) + " has no destination");
    return {};
  }

  /// Checks every extent before queueing any (so refused extents use up no
  /// sequence number), then queues the batch.
  glmrt_status submit_batch(const glmrt_extent* extents, int64_t n_extents,
                            glmrt_extent_result* results, glmrt_io_ticket* ticket,
                            uint64_t* first_sequence, bool urgent) {
    if (n_extents < 0 || (n_extents > 0 && (!extents || !results)) || !ticket) {
      error_ = message("submit got no extent list, results or ticket");
      return GLMRT_ERR_INVALID_ARGUMENT;
    }
    for (int64_t e = 0; e < n_extents; ++e) {
      if (std::string problem = check_extent(extents[e], e); !problem.empty()) {
        error_ = std::move(problem);
        return GLMRT_ERR_INVALID_ARGUMENT;
      }
    }
    *ticket = self().queue().submit(extents, n_extents, results, first_sequence, urgent);
    return GLMRT_OK;
  }

  bool opened_ = false;
  std::string error_;
};

}  // namespace glmrt::io_support
