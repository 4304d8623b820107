// The threads that answer requests read whole. Private to src/serve.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace glmrt::serve {

/// A fixed pool of threads taking tasks in order. Unlike httplib's
/// ThreadPool, a thread that cannot be created (a process or pids limit) is
/// an error naming the count, after the threads already started are stopped
/// and joined: httplib's constructor threw with joinable threads alive,
/// which ends the process.
class HandlerThreads {
 public:
  explicit HandlerThreads(std::size_t threads);
  ~HandlerThreads();
  HandlerThreads(const HandlerThreads&) = delete;
  HandlerThreads& operator=(const HandlerThreads&) = delete;

  void enqueue(std::function<void()> task);
  /// Lets the queued tasks finish, then joins every thread; once.
  void shutdown();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace glmrt::serve
