#include "handler_threads.h"

#include <glmrt/base/error.h>

#include <system_error>

namespace glmrt::serve {

HandlerThreads::HandlerThreads(std::size_t threads) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    try {
      threads_.emplace_back([this] { work(); });
    } catch (const std::system_error& e) {
      shutdown();
      fail("cannot start HTTP thread {} of {}: {} (lower --http-threads or --max-queue)", i + 1,
           threads, e.what());
    }
  }
}

HandlerThreads::~HandlerThreads() {
  shutdown();
}

void HandlerThreads::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void HandlerThreads::shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
  }
}

void HandlerThreads::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to answer
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace glmrt::serve
