// Reads many pieces of a model's files on several I/O threads, so enough
// requests are in flight to keep a drive busy, and runs what each piece is
// for (a conversion) on the thread that read it, as soon as it has arrived:
// no OpenMP team waits on the disk, and staging memory stays one buffer per
// thread.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace glmrt {

/// Bytes [offset, offset + length) of a tensor.
struct ReadPiece {
  const TensorInfo* tensor = nullptr;
  uint64_t offset = 0, length = 0;
  /// Where they go; nullptr: into a buffer of the reading thread, handed to the task's `then`.
  std::byte* destination = nullptr;
  /// Read with O_DIRECT (no page cache copy). The destination is congruent to
  /// the bytes' file offset modulo kDirectAlignment, and the memory from the
  /// aligned block below it to the aligned boundary after its end may be
  /// written. Read buffered where the filesystem has no O_DIRECT.
  bool direct = false;
};

struct ReadTask {
  std::vector<ReadPiece> pieces;
  /// Called on the reading thread once every piece has arrived, with each
  /// piece's bytes (in its destination or the thread's buffer), in order.
  std::function<void(std::span<const std::span<const std::byte>>)> then;
};

class ParallelReader {
 public:
  static constexpr uint64_t kDirectAlignment = 4096;

  /// `threads` I/O threads reading through `files`' descriptors (buffered pread).
  ParallelReader(const TensorDirectory& files, int threads);
  /// Stops the threads; tasks not yet started are abandoned.
  ~ParallelReader();
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;

  /// Queues `task` (tasks start in submission order). Destinations must stay
  /// valid until wait_all() returns or the reader is destroyed.
  void submit(ReadTask task);
  /// Waits until every task submitted has finished, calling `progress` with
  /// the bytes read so far about every `interval`. Rethrows the first error a
  /// read (naming file, tensor and offset) or a task's `then` threw; tasks
  /// not started by then are dropped.
  void wait_all(const std::function<void(uint64_t)>& progress,
                std::chrono::milliseconds interval = std::chrono::milliseconds(100));
  uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }

 private:
  void work();
  void run(const ReadTask& task, std::vector<std::vector<std::byte>>& buffers);
  /// Reads a direct piece; false when O_DIRECT is refused (the caller reads buffered).
  bool read_direct(const ReadPiece& p);

  const TensorDirectory& files_;
  std::vector<int> direct_fds_;  // per file; -1 where O_DIRECT cannot be used
  std::mutex mutex_;
  std::condition_variable work_ready_, all_done_;
  std::deque<ReadTask> queue_;
  size_t unfinished_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::atomic<uint64_t> bytes_read_{0};
  std::vector<std::jthread> threads_;
};

}  // namespace glmrt
