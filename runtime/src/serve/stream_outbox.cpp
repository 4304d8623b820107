#include <glmrt/serve/stream_outbox.h>

namespace glmrt::serve {

void StreamOutbox::post(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    if (error_) return;  // the stream is ending: nothing more goes out
    work_.push_back(std::move(work));
  }
  posted_.notify_one();
}

void StreamOutbox::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  posted_.notify_one();
}

bool StreamOutbox::failed() const {
  std::lock_guard lock(mutex_);
  return error_ != nullptr;
}

void StreamOutbox::run_until_closed() {
  std::unique_lock lock(mutex_);
  for (;;) {
    posted_.wait(lock, [&] { return closed_ || !work_.empty(); });
    if (work_.empty()) break;  // closed, everything run
    std::function<void()> work = std::move(work_.front());
    work_.pop_front();
    lock.unlock();
    std::exception_ptr error;
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      error_ = error;
      work_.clear();
    }
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace glmrt::serve
