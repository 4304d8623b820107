#include "glmrt/model_files/parallel_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "file_io.h"

namespace glmrt {

ParallelReader::ParallelReader(const TensorDirectory& files, int threads, size_t chunk_bytes)
    : files_(files), chunk_bytes_(std::max<size_t>(chunk_bytes, 4096)) {
  const int count = std::max(threads, 1);
  threads_.reserve(count);
  try {
    for (int i = 0; i < count; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    // The threads already started wait for work; stop them before unwinding.
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    threads_.clear();
    throw;
  }
}

ParallelReader::~ParallelReader() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_ready_.notify_all();
  threads_.clear();  // joins
}

size_t ParallelReader::submit(std::span<const ReadPiece> pieces) {
  std::lock_guard lock(mutex_);
  const size_t group = remaining_.size();
  size_t chunks = 0;
  for (const ReadPiece& piece : pieces) {
    for (uint64_t at = 0; at < piece.destination.size(); at += chunk_bytes_) {
      const size_t length = std::min<uint64_t>(chunk_bytes_, piece.destination.size() - at);
      queue_.push_back({group, piece.tensor, at, piece.destination.subspan(at, length)});
      ++chunks;
    }
  }
  remaining_.push_back(chunks);
  if (chunks == 0) completed_.push_back(group);
  work_ready_.notify_all();
  group_done_.notify_all();
  return group;
}

std::optional<size_t> ParallelReader::wait_any(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  group_done_.wait_for(lock, timeout, [&] { return error_ || !completed_.empty(); });
  if (error_) std::rethrow_exception(error_);
  if (completed_.empty()) return std::nullopt;
  const size_t group = completed_.front();
  completed_.pop_front();
  return group;
}

void ParallelReader::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const Chunk chunk = queue_.front();
    queue_.pop_front();
    lock.unlock();
    std::exception_ptr failure;
    try {
      const TensorInfo& t = *chunk.tensor;
      model_files::pread_exact(files_.fd(t.file_index), t.offset + chunk.offset, chunk.destination,
                               files_.files().at(t.file_index), fmt::format("tensor '{}'", t.name));
      bytes_read_.fetch_add(chunk.destination.size(), std::memory_order_relaxed);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure) {
      if (!error_) error_ = failure;
      queue_.clear();  // nothing more is needed: the load has failed
      group_done_.notify_all();
      continue;
    }
    if (--remaining_[chunk.group] == 0) {
      completed_.push_back(chunk.group);
      group_done_.notify_all();
    }
  }
}

}  // namespace glmrt
