// Two pieces of a file in memory: the caller fills one while a thread writes
// the other to the AtomicFile, so filling and the disk overlap. A write that
// fails (a full disk) is rethrown to the caller at its next call. Private to
// src/model_files (gguf_writer.cpp).
#pragma once

#include <glmrt/base/atomic_file.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace glmrt::gguf {

class PieceWriter {
 public:
  explicit PieceWriter(AtomicFile& out) : out_(out), thread_([this] { run(); }) {}
  ~PieceWriter() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;

  /// The buffer to fill next (once its last write is done), emptied.
  std::string& next_buffer() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !pending_[filling_] || error_; });
    if (error_) std::rethrow_exception(error_);
    buffers_[filling_].clear();
    return buffers_[filling_];
  }
  /// Hands the buffer filled to the writing thread.
  void submit() {
    {
      std::lock_guard lock(mutex_);
      pending_[filling_] = true;
      queue_.push_back(filling_);
      filling_ ^= 1;
    }
    changed_.notify_all();
  }
  /// Waits for every piece submitted to be written.
  void finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (!pending_[0] && !pending_[1]) || error_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      const int index = queue_.front();
      queue_.pop_front();
      if (!error_) {
        lock.unlock();
        try {
          out_.write(buffers_[index]);
        } catch (...) {
          lock.lock();
          error_ = std::current_exception();
          lock.unlock();
        }
        lock.lock();
      }
      pending_[index] = false;
      changed_.notify_all();
    }
  }

  AtomicFile& out_;
  std::array<std::string, 2> buffers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> queue_;
  std::array<bool, 2> pending_{false, false};
  int filling_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace glmrt::gguf
