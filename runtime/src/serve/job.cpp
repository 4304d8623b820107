#include <glmrt/serve/job.h>
#include <glmrt/serve/json_output.h>

#include <exception>
#include <new>

namespace glmrt::serve {

Job::Job(Work work) : work_(std::move(work)) {}

void Job::run() {
  std::optional<ApiError> error;
  try {
    work_(*this);
  } catch (const ApiError& e) {
    error = e;
  } catch (const UnsatisfiableConstraint& e) {
    // The request's own format and bans, met mid-answer: the client's to change.
    error = unsatisfiable_request(e);
  } catch (const std::bad_alloc&) {
    error = internal_error("out of memory while running the request", "std::bad_alloc");
  } catch (const std::exception& e) {
    error = internal_error("the request failed inside the server", e.what());
  }
  // Work that stopped early left its response unfinished: say why, for a
  // client still listening (the server cancels at the end of its shutdown grace).
  if (!error && !completed())
    error = cancelled()
                ? ApiError(503, "server_error", "the request was cancelled before it finished")
                : internal_error("the request ended without a response",
                                 "the work returned before sending its last piece");
  finish(std::move(error));
}

bool Job::completed() const {
  std::lock_guard lock(mutex_);
  return complete_;
}

void Job::send(std::string piece) {
  {
    std::lock_guard lock(mutex_);
    pieces_.push_back(std::move(piece));
  }
  changed_.notify_all();
}

void Job::send_last(std::string piece) {
  {
    std::lock_guard lock(mutex_);
    pieces_.push_back(std::move(piece));
    complete_ = true;
  }
  changed_.notify_all();
}

void Job::finish(std::optional<ApiError> error) {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    error_ = std::move(error);
  }
  changed_.notify_all();
}

void Job::abandon(ApiError error) {
  finish(std::move(error));
}

Job::Next Job::next(std::string& piece, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] { return !pieces_.empty() || finished_; });
  if (!pieces_.empty()) {
    piece = std::move(pieces_.front());
    pieces_.pop_front();
    return Next::piece;
  }
  return finished_ ? Next::finished : Next::timeout;
}

std::optional<ApiError> Job::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace glmrt::serve
