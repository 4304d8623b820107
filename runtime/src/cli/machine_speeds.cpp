#include "machine_speeds.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace glmrt::cli {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kDriveChunkBytes = uint64_t{64} << 20;  // as bench/io's baseline
constexpr uint64_t kDirectAlignment = 4096;

fs::path largest_file(const fs::path& model_dir) {
  // A GGUF model given as its file (a split one's first shard stands for it).
  if (fs::is_regular_file(model_dir)) return model_dir;
  fs::path largest;
  uintmax_t largest_size = 0;
  for (const auto& entry : fs::directory_iterator(model_dir)) {
    if (!entry.is_regular_file() || entry.file_size() <= largest_size) continue;
    largest = entry.path();
    largest_size = entry.file_size();
  }
  if (largest.empty()) fail("bench --limits: {} holds no file to read", model_dir.string());
  return largest;
}

/// Closes the descriptor on every way out.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

/// Sums 64-bit words with four chains (the loads, not the adds, set the pace).
uint64_t sum_words(const uint64_t* words, size_t count) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    a += words[i];
    b += words[i + 1];
    c += words[i + 2];
    d += words[i + 3];
  }
  for (; i < count; ++i) a += words[i];
  return a ^ b ^ c ^ d;
}

}  // namespace

double measure_drive_read_gb_per_second(const fs::path& model_dir, uint64_t max_bytes) {
  const fs::path file = largest_file(model_dir);
  const uint64_t size = fs::file_size(file);
  const uint64_t chunk = std::min(kDriveChunkBytes, size / kDirectAlignment * kDirectAlignment);
  if (chunk == 0)
    fail("bench --limits: {} is smaller than one O_DIRECT block ({} bytes)", file.string(),
         kDirectAlignment);
  const uint64_t total = std::max(chunk, std::min(max_bytes, size) / chunk * chunk);
  // No eviction: O_DIRECT reads come from the drive whatever the page cache
  // holds, and a warm run's cached pages must stay where they are.
  FileDescriptor descriptor{::open(file.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC)};
  if (descriptor.fd < 0)
    fail(
        "bench --limits: {}: O_DIRECT open refused ({}): the drive limit needs a file system "
        "that reads past the page cache",
        file.string(), std::strerror(errno));
  HugePageBlock buffer(chunk, nullptr, "bench drive read");
  std::memset(buffer.data(), 0, buffer.size());  // fault the pages in before timing
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t at = 0; at < total; at += chunk) {
    const ssize_t got = ::pread(descriptor.fd, buffer.data(), chunk, static_cast<off_t>(at));
    if (got != static_cast<ssize_t>(chunk))
      fail("bench --limits: {}: O_DIRECT read of {} bytes at {} returned {} ({})", file.string(),
           chunk, at, got, got < 0 ? std::strerror(errno) : "short");
  }
  const double seconds = seconds_since(t0);
  return seconds > 0 ? static_cast<double>(total) / seconds / 1e9 : 0.0;
}

double measure_memory_read_gb_per_second(uint64_t bytes, int threads) {
  threads = std::max(1, threads);
  HugePageBlock buffer(bytes, nullptr, "bench memory read");
  std::memset(buffer.data(), 1, buffer.size());  // every page resident before timing
  const size_t words = buffer.size() / sizeof(uint64_t);
  const auto* data = reinterpret_cast<const uint64_t*>(buffer.data());
  std::vector<double> rates;
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      const size_t begin = words * static_cast<size_t>(t) / static_cast<size_t>(threads);
      const size_t end = words * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
      pool.emplace_back([&sums, data, begin, end, t] {
        sums[static_cast<size_t>(t)] = sum_words(data + begin, end - begin);
      });
    }
    for (std::thread& worker : pool) worker.join();
    const double seconds = seconds_since(t0);
    rates.push_back(seconds > 0 ? static_cast<double>(buffer.size()) / seconds / 1e9 : 0.0);
  }
  // The sums are stored where the compiler must keep them, so the reads stay.
  uint64_t checksum = 0;
  for (uint64_t s : sums) checksum ^= s;
  volatile uint64_t kept = checksum;
  (void)kept;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace glmrt::cli
