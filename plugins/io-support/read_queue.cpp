#include "read_queue.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace glmrt::io_support {
namespace {

/// glmrt_extent_result::completed_us: at least 1 (0 says "not reported"),
/// saturating.
uint32_t microseconds_since(std::chrono::steady_clock::time_point start) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return static_cast<uint32_t>(std::clamp<int64_t>(us, 1, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

ReadQueue::ReadQueue(const glmrt_host_services& host, int threads, const char* purpose,
                     ExtentReader& reader, bool stop_batch_on_failure,
                     uint64_t max_bytes_per_second, ByteRateLimit::Clock::duration cap_credit)
    : host_(host),
      reader_(reader),
      stop_batch_on_failure_(stop_batch_on_failure),
      rate_limit_(max_bytes_per_second
                      ? std::make_unique<ByteRateLimit>(max_bytes_per_second, cap_credit)
                      : nullptr) {
  if (!GLMRT_HOST_HAS_THREADS(&host))
    throw std::runtime_error(
        "the host offers no start_thread service (it is older than ABI 1.1); asynchronous reads "
        "need it");
  for (int t = 0; t < threads; ++t) {
    const uint64_t handle = host.start_thread(host.context, purpose, &worker_entry, this);
    if (!handle) {
      stop();  // the destructor does not run when the constructor throws
      throw std::runtime_error(std::string("the host refused to start thread ") +
                               std::to_string(t + 1) + " for " + purpose);
    }
    handles_.push_back(handle);
  }
}

ReadQueue::~ReadQueue() {
  stop();
}

void ReadQueue::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (uint64_t handle : handles_) host_.join_thread(host_.context, handle);
  handles_.clear();
}

void ReadQueue::worker_entry(void* self) noexcept {
  static_cast<ReadQueue*>(self)->work();
}

void ReadQueue::work() noexcept {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || !jobs_.empty() || !urgent_jobs_.empty(); });
    // Jobs queued before stopping are still done: their buffers and results
    // belong to a ticket the host will wait on.
    std::deque<Job>& queue = urgent_jobs_.empty() ? jobs_ : urgent_jobs_;
    if (queue.empty()) return;
    const Job job = queue.front();
    queue.pop_front();
    glmrt_extent_result result{0, GLMRT_ERR_IO, 0};
    std::string error;
    if (!(stop_batch_on_failure_ && tickets_.at(job.ticket).first_failed >= 0)) {
      lock.unlock();
      result = {0, GLMRT_OK, 0};
      const uint64_t place =
          rate_limit_ ? rate_limit_->reserve_place(job.extent.length, job.urgent) : 0;
      error = reader_.read_extent(job.extent, job.sequence, result);
      if (rate_limit_) rate_limit_->wait_for(place);
      lock.lock();
    }
    complete(job, result, std::move(error));
  }
}

void ReadQueue::complete(const Job& job, const glmrt_extent_result& result, std::string error) {
  glmrt_extent_result done = result;
  done.completed_us = microseconds_since(job.submitted);
  *job.result = done;
  TicketState& state = tickets_.at(job.ticket);
  if (done.status == GLMRT_ERR_CANCELLED) {
    state.cancelled = true;
  } else if (done.status != GLMRT_OK &&
             (state.first_failed < 0 || job.index < state.first_failed)) {
    state.first_failed = job.index;
    state.status = done.status;
    state.error = std::move(error);
  }
  if (--state.remaining == 0) ticket_done_.notify_all();
}

glmrt_io_ticket ReadQueue::submit(const glmrt_extent* extents, int64_t n_extents,
                                  glmrt_extent_result* results, uint64_t* first_sequence,
                                  bool urgent) {
  std::lock_guard lock(mutex_);
  const glmrt_io_ticket ticket = next_ticket_++;
  if (first_sequence) *first_sequence = next_sequence_;
  tickets_[ticket].remaining = n_extents;
  const auto now = std::chrono::steady_clock::now();
  std::deque<Job>& queue = urgent ? urgent_jobs_ : jobs_;
  for (int64_t e = 0; e < n_extents; ++e)
    queue.push_back({ticket, e, next_sequence_++, extents[e], &results[e], now, urgent});
  work_ready_.notify_all();
  return ticket;
}

glmrt_status ReadQueue::wait(glmrt_io_ticket ticket, std::string& error) {
  std::unique_lock lock(mutex_);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) {
    error = "wait on unknown ticket " + std::to_string(ticket);
    return GLMRT_ERR_INVALID_ARGUMENT;
  }
  ticket_done_.wait(lock, [&] { return it->second.remaining == 0; });
  glmrt_status status = it->second.status;
  if (status != GLMRT_OK)
    error = std::move(it->second.error);
  else if (it->second.cancelled)
    status = GLMRT_ERR_CANCELLED;
  tickets_.erase(it);
  return status;
}

bool ReadQueue::cancel(glmrt_io_ticket ticket, int64_t& cancelled, std::string& error) {
  std::lock_guard lock(mutex_);
  cancelled = 0;
  if (!tickets_.contains(ticket)) {
    error = "cancel of unknown ticket " + std::to_string(ticket);
    return false;
  }
  // A job still on a queue has not started; one a worker took runs to its end.
  for (std::deque<Job>* queue : {&urgent_jobs_, &jobs_}) {
    for (auto it = queue->begin(); it != queue->end();) {
      if (it->ticket != ticket) {
        ++it;
        continue;
      }
      complete(*it, {0, GLMRT_ERR_CANCELLED, 0}, {});
      ++cancelled;
      it = queue->erase(it);
    }
  }
  return true;
}

bool ReadQueue::poll(glmrt_io_ticket ticket, bool& complete, std::string& error) {
  std::lock_guard lock(mutex_);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) {
    error = "poll on unknown ticket " + std::to_string(ticket);
    return false;
  }
  complete = it->second.remaining == 0;
  return true;
}

}  // namespace glmrt::io_support
