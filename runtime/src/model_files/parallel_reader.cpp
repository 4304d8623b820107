#include <glmrt/model_files/parallel_reader.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <glmrt/model_files/file_io.h>
#include <glmrt/base/error.h>

namespace glmrt {

ParallelReader::ParallelReader(const TensorDirectory& files, int threads) : files_(files) {
  for (const auto& file : files_.files()) {
    int fd;
    do {
      fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
    } while (fd < 0 && errno == EINTR);
    direct_fds_.push_back(fd);  // -1 (tmpfs, some network filesystems): buffered reads
  }
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
    for (int fd : direct_fds_) model_files::close_fd(fd);
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
  threads_.clear();  // joins: running tasks finish first
  for (int fd : direct_fds_) model_files::close_fd(fd);
}

void ParallelReader::submit(ReadTask task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
    ++unfinished_;
  }
  work_ready_.notify_one();
}

void ParallelReader::wait_all(const std::function<void(uint64_t)>& progress,
                              std::chrono::milliseconds interval) {
  std::unique_lock lock(mutex_);
  for (;;) {
    all_done_.wait_for(lock, interval, [&] { return error_ || unfinished_ == 0; });
    if (error_) std::rethrow_exception(error_);
    if (progress) progress(bytes_read());
    if (unfinished_ == 0) return;
  }
}

bool ParallelReader::read_direct(const ReadPiece& p) {
  const TensorInfo& t = *p.tensor;
  const int fd = direct_fds_.at(t.file_index);
  const uint64_t begin = t.offset + p.offset, end = begin + p.length;
  const uint64_t window_begin = begin / kDirectAlignment * kDirectAlignment;
  const uint64_t window_end = (end + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
  std::byte* window = p.destination - (begin - window_begin);
  if (fd < 0 || reinterpret_cast<uintptr_t>(window) % kDirectAlignment != 0) return false;
  uint64_t done = 0;
  const uint64_t needed = end - window_begin, length = window_end - window_begin;
  while (done < length) {
    const ssize_t n =
        ::pread(fd, window + done, length - done, static_cast<off_t>(window_begin + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && done == 0) return false;  // alignment refused: buffered
    if (n < 0)
      fail("reading tensor '{}' from {} at byte {} failed: {}", t.name,
           files_.files().at(t.file_index), window_begin + done, std::strerror(errno));
    if (n == 0) break;  // end of file: the window's tail lies past it
    done += static_cast<uint64_t>(n);
  }
  if (done < needed)
    fail(
        "{} ends at byte {} while reading tensor '{}' (expected its bytes up to {}); was the file "
        "truncated after it was opened?",
        files_.files().at(t.file_index), window_begin + done, t.name, end);
  return true;
}

void ParallelReader::run(const ReadTask& task, std::vector<std::vector<std::byte>>& buffers) {
  if (buffers.size() < task.pieces.size()) buffers.resize(task.pieces.size());
  std::vector<std::span<const std::byte>> arrived;
  arrived.reserve(task.pieces.size());
  for (size_t i = 0; i < task.pieces.size(); ++i) {
    const ReadPiece& p = task.pieces[i];
    std::byte* dst = p.destination;
    if (!dst) {
      buffers[i].resize(p.length);
      dst = buffers[i].data();
    }
    const TensorInfo& t = *p.tensor;
    if (!(p.direct && p.destination && read_direct(p)))
      model_files::pread_exact(files_.fd(t.file_index), t.offset + p.offset, {dst, p.length},
                               files_.files().at(t.file_index), fmt::format("tensor '{}'", t.name));
    bytes_read_.fetch_add(p.length, std::memory_order_relaxed);
    arrived.emplace_back(dst, p.length);
  }
  if (task.then) task.then(arrived);
}

void ParallelReader::work() {
  std::vector<std::vector<std::byte>> buffers;  // this thread's staging, reused
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const ReadTask task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    std::exception_ptr failure;
    try {
      run(task, buffers);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure && !error_) {
      error_ = failure;
      unfinished_ -= queue_.size();  // nothing more is needed: the load has failed
      queue_.clear();
    }
    if (--unfinished_ == 0 || error_) all_done_.notify_all();
  }
}

}  // namespace glmrt
