// io plugins of ABI 1.6: an urgent batch overtakes read-ahead queued before
// it, and cancel() gives up what has not started (completing it as
// cancelled, its destination untouched) and is harmless on a read that has
// started or finished. Both are observed through the plugin's own calls
// behind a queue of reads long enough that most of it has not started when
// the batch under test arrives; a box so loaded that the queue drained first
// makes an attempt inconclusive, and it is tried again with a longer queue.
#include "io_priority_conformance.h"

#include <glmrt/base/huge_pages.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace glmrt::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kAttempts = 3;
/// Each queued read: 512 KiB from the start of the file, all into one buffer
/// (the same bytes, so the queue costs time, not memory).
constexpr uint64_t kQueuedBytes = 512 * 1024;
constexpr int64_t kFirstQueueLength = 32;
/// Fewer queued reads pending when the urgent one is submitted than this, and
/// those in flight beside it (a plugin's threads) decide the outcome.
constexpr int64_t kConclusivePending = 16;
constexpr std::byte kUntouched{0xa5};

/// A batch submitted to the plugin, with its results and when the host
/// submitted it.
struct Batch {
  std::vector<glmrt_extent> extents;
  std::vector<glmrt_extent_result> results;
  glmrt_io_ticket ticket = 0;
  Clock::time_point submitted;
  glmrt_status status = GLMRT_OK;
};

/// Submits `batch` (urgent or not); false when the plugin refused it.
bool submit(plugin::Io& io, Batch& batch, bool urgent) {
  batch.results.assign(batch.extents.size(), glmrt_extent_result{0, GLMRT_ERR_INTERNAL, 0});
  batch.submitted = Clock::now();
  const auto n = static_cast<int64_t>(batch.extents.size());
  batch.status =
      urgent ? io.submit_urgent(batch.extents.data(), n, batch.results.data(), &batch.ticket)
             : io.submit(batch.extents.data(), n, batch.results.data(), &batch.ticket);
  return batch.status == GLMRT_OK && batch.ticket != 0;
}

/// When an extent of `batch` completed, on the host's clock.
Clock::time_point completed_at(const Batch& batch, size_t extent) {
  return batch.submitted + std::chrono::microseconds(batch.results[extent].completed_us);
}

Batch queue_of_reads(int64_t length, std::byte* destination) {
  Batch queue;
  queue.extents.assign(static_cast<size_t>(length),
                       glmrt_extent{0, 0, 0, kQueuedBytes, destination});
  return queue;
}

class PriorityChecks {
 public:
  PriorityChecks(CheckReport& report, plugin::Io& io, std::span<const std::byte> file)
      : report_(report),
        io_(io),
        file_(file),
        queue_buffer_(kQueuedBytes, nullptr, "io conformance"),
        buffer_(4 * 65536, nullptr, "io conformance") {}

  void urgent_overtakes_queued();
  void cancel_before_start();
  void cancel_after_finish();
  void cancel_unknown_ticket();

 private:
  /// Extents of 64 KiB each (any alignment up to 64 KiB divides them) at
  /// the start of file 0, into buffer_, which is first filled with kUntouched.
  Batch fresh_batch(int n_extents);
  /// Whether the extent holds the file's bytes, or is untouched.
  bool holds_file_bytes(const Batch& batch, size_t extent) const;
  bool untouched(const Batch& batch, size_t extent) const;

  CheckReport& report_;
  plugin::Io& io_;
  std::span<const std::byte> file_;
  HugePageBlock queue_buffer_, buffer_;
};

Batch PriorityChecks::fresh_batch(int n_extents) {
  std::memset(buffer_.data(), static_cast<int>(kUntouched), buffer_.size());
  Batch batch;
  for (int k = 0; k < n_extents; ++k)
    batch.extents.push_back(glmrt_extent{0, 0, static_cast<uint64_t>(k) * 65536, 65536,
                                         buffer_.data() + static_cast<size_t>(k) * 65536});
  return batch;
}

bool PriorityChecks::holds_file_bytes(const Batch& batch, size_t extent) const {
  const glmrt_extent& e = batch.extents[extent];
  return batch.results[extent].bytes == e.length &&
         std::memcmp(e.destination, file_.data() + e.offset, e.length) == 0;
}

bool PriorityChecks::untouched(const Batch& batch, size_t extent) const {
  const auto* bytes = static_cast<const std::byte*>(batch.extents[extent].destination);
  return std::all_of(bytes, bytes + batch.extents[extent].length,
                     [](std::byte b) { return b == kUntouched; });
}

void PriorityChecks::urgent_overtakes_queued() {
  const std::string name = "an urgent read completes before read-ahead queued earlier (ABI 1.6)";
  std::string detail;
  int drained = 0;  // attempts whose queue was (nearly) done before the urgent submit
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int64_t length = kFirstQueueLength << attempt;
    Batch queue = queue_of_reads(length, queue_buffer_.data());
    Batch urgent = fresh_batch(1);
    if (!submit(io_, queue, false) || !submit(io_, urgent, true)) {
      report_.fail(name, fmt::format("submit refused: {}", io_.last_error()));
      if (queue.ticket) io_.wait(queue.ticket);
      return;
    }
    const glmrt_status urgent_status = io_.wait(urgent.ticket);
    const glmrt_status queue_status = io_.wait(queue.ticket);
    if (urgent_status != GLMRT_OK || queue_status != GLMRT_OK || !holds_file_bytes(urgent, 0)) {
      report_.fail(name, fmt::format("status {} / {}, or wrong bytes: {}", urgent_status,
                                     queue_status, io_.last_error()));
      return;
    }
    // A queue served in order completes the urgent read after every queued
    // one still pending when it was submitted but those in flight beside it;
    // served urgent first, after few. Reads done before the urgent one was
    // submitted (a fast drive, a busy machine) say nothing either way.
    const Clock::time_point urgent_done = completed_at(urgent, 0);
    int64_t pending = 0, after = 0;
    for (size_t k = 0; k < queue.extents.size(); ++k) {
      const Clock::time_point done = completed_at(queue, k);
      if (done <= urgent.submitted) continue;
      ++pending;
      if (done > urgent_done) ++after;
    }
    detail = fmt::format(
        "{} of the {} queued reads pending at its submission completed after the urgent one "
        "({} queued)",
        after, pending, length);
    if (pending < kConclusivePending) {
      ++drained;
      continue;
    }
    if (after * 2 >= pending) {
      report_.pass(name, detail);
      return;
    }
  }
  if (drained == kAttempts) {
    report_.pass(name, fmt::format("not observable here: the queue had drained before the urgent "
                                   "read was submitted ({} attempts, up to {} queued)",
                                   kAttempts, kFirstQueueLength << (kAttempts - 1)));
    return;
  }
  report_.fail(name, detail + fmt::format(" ({} attempts)", kAttempts));
}

void PriorityChecks::cancel_before_start() {
  const std::string name = "cancel of reads not started completes them as cancelled (ABI 1.6)";
  std::string detail;
  int drained = 0;  // attempts whose queue was (nearly) done when cancel() was called
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int64_t length = kFirstQueueLength << attempt;
    Batch queue = queue_of_reads(length, queue_buffer_.data());
    Batch guess = fresh_batch(4);
    if (!submit(io_, queue, false) || !submit(io_, guess, false)) {
      report_.fail(name, fmt::format("submit refused: {}", io_.last_error()));
      if (queue.ticket) io_.wait(queue.ticket);
      return;
    }
    int64_t cancelled = -1;
    const Clock::time_point cancel_called = Clock::now();
    const glmrt_status cancel_status = io_.cancel(guess.ticket, &cancelled);
    const glmrt_status guess_status = io_.wait(guess.ticket);
    const glmrt_status queue_status = io_.wait(queue.ticket);
    if (cancel_status != GLMRT_OK || queue_status != GLMRT_OK) {
      report_.fail(name, fmt::format("cancel status {}, queue status {}: {}", cancel_status,
                                     queue_status, io_.last_error()));
      return;
    }
    // Each extent is either cancelled (0 bytes, destination untouched) or
    // read whole; the count and wait's status say which happened.
    int64_t seen_cancelled = 0;
    std::string wrong;
    for (size_t k = 0; k < guess.extents.size(); ++k) {
      const glmrt_extent_result& r = guess.results[k];
      if (r.status == GLMRT_ERR_CANCELLED) {
        ++seen_cancelled;
        if (r.bytes != 0 || !untouched(guess, k))
          wrong += fmt::format("extent {} cancelled but {} bytes written; ", k, r.bytes);
      } else if (r.status != GLMRT_OK || !holds_file_bytes(guess, k)) {
        wrong += fmt::format("extent {} neither cancelled nor read (status {}); ", k, r.status);
      }
    }
    const glmrt_status expected_wait = seen_cancelled > 0 ? GLMRT_ERR_CANCELLED : GLMRT_OK;
    if (!wrong.empty() || cancelled != seen_cancelled || guess_status != expected_wait) {
      report_.fail(name,
                   fmt::format("{}cancel() counted {}, results say {}; wait returned {} "
                               "(expected {})",
                               wrong, cancelled, seen_cancelled, guess_status, expected_wait));
      return;
    }
    detail = fmt::format("{} of 4 extents queued behind {} reads cancelled", cancelled, length);
    if (cancelled == 4) {
      report_.pass(name, detail + ", their buffers untouched");
      return;
    }
    // The guesses may have started legitimately when the queue ahead of them
    // was (nearly) done before cancel() was called.
    int64_t still_queued = 0;
    for (size_t k = 0; k < queue.extents.size(); ++k)
      if (completed_at(queue, k) > cancel_called) ++still_queued;
    if (still_queued < kConclusivePending) ++drained;
  }
  if (drained == kAttempts) {
    report_.pass(name, fmt::format("not observable here: the queue had drained before cancel() "
                                   "was called ({} attempts, up to {} queued)",
                                   kAttempts, kFirstQueueLength << (kAttempts - 1)));
    return;
  }
  report_.fail(name, detail + fmt::format(" ({} attempts)", kAttempts));
}

void PriorityChecks::cancel_after_finish() {
  const std::string name = "cancel of a finished read changes nothing (ABI 1.6)";
  Batch done = fresh_batch(2);
  if (!submit(io_, done, false)) {
    report_.fail(name, fmt::format("submit refused: {}", io_.last_error()));
    return;
  }
  int32_t complete = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(30);
  while (io_.poll(done.ticket, &complete) == GLMRT_OK && !complete && Clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  int64_t cancelled = -1;
  const glmrt_status cancel_status = io_.cancel(done.ticket, &cancelled);
  const glmrt_status status = io_.wait(done.ticket);
  const bool ok = complete && cancel_status == GLMRT_OK && cancelled == 0 && status == GLMRT_OK &&
                  holds_file_bytes(done, 0) && holds_file_bytes(done, 1);
  report_.expect(ok, name,
                 ok ? std::string("0 extents cancelled, the bytes read")
                    : fmt::format("complete {}, cancel status {} counted {}, wait status {}: {}",
                                  complete, cancel_status, cancelled, status, io_.last_error()));
}

void PriorityChecks::cancel_unknown_ticket() {
  const std::string name = "cancel of a released ticket fails with a message (ABI 1.6)";
  Batch done = fresh_batch(1);
  if (!submit(io_, done, false) || io_.wait(done.ticket) != GLMRT_OK) {
    report_.fail(name, fmt::format("read failed: {}", io_.last_error()));
    return;
  }
  int64_t cancelled = -1;
  const glmrt_status status = io_.cancel(done.ticket, &cancelled);
  const std::string message = io_.last_error() ? io_.last_error() : "";
  report_.expect(status == GLMRT_ERR_INVALID_ARGUMENT && !message.empty(), name,
                 fmt::format("status {}, last_error \"{}\"", status, message));
}

}  // namespace

void check_io_priority(CheckReport& report, plugin::Io& io, int abi_minor, uint32_t alignment,
                       std::span<const std::byte> file) {
  if (abi_minor < GLMRT_ABI_MINOR_IO_PRIORITY) {
    report.skip("urgent reads and cancellation (ABI 1.6)",
                fmt::format("the plugin is of ABI 1.{}: the host submits its misses as any "
                            "read and cancels nothing",
                            abi_minor));
    return;
  }
  if (alignment > 65536 || file.size() < 4 * 65536 + kQueuedBytes) {
    report.skip("urgent reads and cancellation (ABI 1.6)",
                "the test file is too small for the plugin's alignment");
    return;
  }
  PriorityChecks checks(report, io, file);
  checks.urgent_overtakes_queued();
  checks.cancel_before_start();
  checks.cancel_after_finish();
  checks.cancel_unknown_ticket();
}

}  // namespace glmrt::conformance
