// The asynchronous half of an io plugin (ABI 1.1): submit() queues a batch's
// extents and returns a ticket; worker threads, started through the host's
// start_thread service, take extents in submission order and hand each to
// the plugin's ExtentReader; wait() and poll() follow the ticket. Urgent
// batches (ABI 1.6) have a queue of their own that workers empty first, and
// cancel() takes a ticket's extents that no worker has started off the
// queues. One queue per Io object; the host calls submit/wait/poll/cancel
// from one thread at a time.
#pragma once

#include "byte_rate_limit.h"

#include <glmrt/plugin/io.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace glmrt::io_support {

/// How a plugin reads one extent. Called on a worker thread, for several
/// extents at once when the queue has several threads.
class ExtentReader {
 public:
  /// Reads `extent` into its destination. `sequence` numbers extents from 1
  /// in submission order across batches. Sets result.bytes (what reached the
  /// destination) and result.status; on failure returns the message naming
  /// the file and offset (empty on success).
  virtual std::string read_extent(const glmrt_extent& extent, uint64_t sequence,
                                  glmrt_extent_result& result) noexcept = 0;

 protected:
  ~ExtentReader() = default;
};

class ReadQueue {
 public:
  /// Starts `threads` workers through host.start_thread; throws
  /// std::runtime_error when the host lacks the service or refuses. With
  /// `stop_batch_on_failure`, the extents of a batch queued after one that
  /// failed are not read (result: 0 bytes, GLMRT_ERR_IO).
  /// `max_bytes_per_second` > 0 caps what the workers read together, with
  /// `cap_credit` of credit (byte_rate_limit.h).
  ReadQueue(const glmrt_host_services& host, int threads, const char* purpose, ExtentReader& reader,
            bool stop_batch_on_failure = false, uint64_t max_bytes_per_second = 0,
            ByteRateLimit::Clock::duration cap_credit = ByteRateLimit::kBurst);
  ReadQueue(const ReadQueue&) = delete;
  ReadQueue& operator=(const ReadQueue&) = delete;
  /// Finishes the extents already queued, then stops and joins the workers.
  ~ReadQueue();

  int threads() const { return static_cast<int>(handles_.size()); }

  /// Queues the batch (extents are copied; results are written as extents
  /// complete, each with the microseconds from here to its completion, ABI
  /// 1.4). The caller has checked the extents. `first_sequence`, when
  /// given, receives the sequence number of the batch's first extent.
  /// `urgent` batches start before any extent queued without it that has
  /// not started.
  glmrt_io_ticket submit(const glmrt_extent* extents, int64_t n_extents,
                         glmrt_extent_result* results, uint64_t* first_sequence = nullptr,
                         bool urgent = false);
  /// Completes the ticket's extents that no worker has started with 0
  /// bytes and GLMRT_ERR_CANCELLED (destinations untouched); `cancelled`
  /// receives how many. False with `error` set for an unknown ticket.
  bool cancel(glmrt_io_ticket ticket, int64_t& cancelled, std::string& error);
  /// Blocks until the ticket completes and releases it. GLMRT_OK, or the
  /// status of its first failing extent with that extent's message in `error`.
  glmrt_status wait(glmrt_io_ticket ticket, std::string& error);
  /// Whether the ticket has completed; false with `error` set for an unknown ticket.
  bool poll(glmrt_io_ticket ticket, bool& complete, std::string& error);

 private:
  struct Job {
    glmrt_io_ticket ticket;
    int64_t index;
    uint64_t sequence;
    glmrt_extent extent;
    glmrt_extent_result* result;
    std::chrono::steady_clock::time_point submitted;
    bool urgent;  // goes before reads the cap has not begun, too
  };
  struct TicketState {
    int64_t remaining = 0;
    int64_t first_failed = -1;  // lowest failing extent index
    glmrt_status status = GLMRT_OK;
    std::string error;
    bool cancelled = false;  // some extent was cancelled (wait's status when none failed)
  };
  /// Lets the workers finish what is queued, then joins them.
  void stop() noexcept;
  static void worker_entry(void* self) noexcept;
  void work() noexcept;
  /// Records a job's end under the lock: its result, the ticket's count.
  void complete(const Job& job, const glmrt_extent_result& result, std::string error);

  const glmrt_host_services& host_;
  ExtentReader& reader_;
  bool stop_batch_on_failure_;
  std::unique_ptr<ByteRateLimit> rate_limit_;  // null: no cap
  std::mutex mutex_;
  std::condition_variable work_ready_, ticket_done_;
  std::deque<Job> urgent_jobs_;  // taken first
  std::deque<Job> jobs_;
  std::map<glmrt_io_ticket, TicketState> tickets_;
  glmrt_io_ticket next_ticket_ = 1;
  uint64_t next_sequence_ = 1;
  bool stopping_ = false;
  std::vector<uint64_t> handles_;
};

}  // namespace glmrt::io_support
