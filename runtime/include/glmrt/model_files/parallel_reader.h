// Reads many pieces of a model's files into memory on several I/O threads, so
// enough requests are in flight to keep a drive busy while the caller converts
// what has already arrived. Pieces are submitted in groups; the caller learns
// when a whole group has arrived.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

namespace glmrt {

/// A whole tensor's bytes read into `destination` (destination.size() == byte_size).
struct ReadPiece {
  const TensorInfo* tensor = nullptr;
  std::span<std::byte> destination;
};

class ParallelReader {
 public:
  /// `threads` I/O threads reading through `files`' descriptors (buffered
  /// pread), each request at most `chunk_bytes`.
  ParallelReader(const TensorDirectory& files, int threads, size_t chunk_bytes = 8u << 20);
  /// Stops the threads; reads not yet started are abandoned.
  ~ParallelReader();
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;

  /// Queues `pieces` as one group (read in submission order) and returns its id.
  /// Destinations must stay valid until the group completes or the reader is destroyed.
  size_t submit(std::span<const ReadPiece> pieces);
  /// The id of a group whose pieces have all arrived (each reported once), or
  /// nothing after `timeout`. Rethrows the first read error (it names the file,
  /// tensor and offset).
  std::optional<size_t> wait_any(std::chrono::milliseconds timeout);
  /// Bytes read so far, for progress.
  uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }

 private:
  struct Chunk {
    size_t group;
    const TensorInfo* tensor;
    uint64_t offset;  // within the tensor
    std::span<std::byte> destination;
  };
  void work();

  const TensorDirectory& files_;
  size_t chunk_bytes_;
  std::mutex mutex_;
  std::condition_variable work_ready_, group_done_;
  std::deque<Chunk> queue_;
  std::vector<size_t> remaining_;  // chunks still to read, per group
  std::deque<size_t> completed_;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::atomic<uint64_t> bytes_read_{0};
  std::vector<std::jthread> threads_;
};

}  // namespace glmrt
