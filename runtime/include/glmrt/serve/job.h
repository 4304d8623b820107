// One request's work for the model thread, and the channel its response
// comes back through. The HTTP thread that accepted the request waits on the
// channel (streaming each piece as it arrives, or the whole body at the end);
// the model thread runs the work, sends pieces and finishes. Either side may
// give up: the HTTP thread cancels when its client disconnects, the model
// thread fails the job with an error.
#pragma once

#include <glmrt/serve/api_error.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace glmrt::serve {

class Job {
 public:
  using Work = std::function<void(Job&)>;
  explicit Job(Work work);
  /// When the request was queued (time to first token counts from here).
  std::chrono::steady_clock::time_point queued_at() const { return queued_at_; }

  // --- model thread
  /// Runs the work: an ApiError becomes the job's error, any other exception a
  /// 500, work that stopped before its last piece because it was cancelled a
  /// 503; the job is finished afterwards in every case.
  void run();
  /// A piece of the response: an SSE event, or the whole body.
  void send(std::string piece);
  /// The response's last piece (the whole body, or `data: [DONE]`): the work
  /// is complete, whatever a cancellation arriving afterwards says.
  void send_last(std::string piece);
  bool cancelled() const { return cancelled_.load(); }
  /// Answer tokens the work generated (for /metrics).
  void add_generated(int64_t tokens) { generated_ += tokens; }
  int64_t generated() const { return generated_.load(); }

  // --- HTTP thread
  void cancel() { cancelled_.store(true); }
  /// Ends a job that will never run (the server is shutting down).
  void abandon(ApiError error);
  enum class Next { piece, finished, timeout };
  /// The next piece, or `finished` once every piece was taken and the job is done.
  Next next(std::string& piece, std::chrono::milliseconds wait);
  /// The error the job ended with, if any (valid once next() said finished).
  std::optional<ApiError> error() const;

 private:
  std::chrono::steady_clock::time_point queued_at_ = std::chrono::steady_clock::now();
  void finish(std::optional<ApiError> error);
  bool completed() const;

  Work work_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> generated_{0};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pieces_;
  bool finished_ = false;
  bool complete_ = false;  // send_last() was called
  std::optional<ApiError> error_;
};

}  // namespace glmrt::serve
