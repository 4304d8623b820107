// Memory is a budget: every large buffer of the process is charged to one
// MemoryBudget, by category, so `glmrt run` can say where the bytes went and a
// profile's limit is enforced before the machine starts swapping.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

namespace glmrt {

class MemoryBudget {
 public:
  /// limit_bytes = 0 means unlimited.
  explicit MemoryBudget(uint64_t limit_bytes = 0) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  /// Charges `bytes` to `category`; throws glmrt::Error naming the category,
  /// the request and the limit when the budget would be exceeded.
  void charge(const std::string& category, uint64_t bytes);
  void release(const std::string& category, uint64_t bytes) noexcept;

  uint64_t limit() const { return limit_.load(); }
  /// Changes the limit (0 = unlimited); what is charged already stays.
  void set_limit(uint64_t limit_bytes) { limit_ = limit_bytes; }
  uint64_t used() const { return used_.load(); }
  uint64_t peak() const { return peak_.load(); }
  std::map<std::string, uint64_t> by_category() const;

 private:
  std::atomic<uint64_t> limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> categories_;
};

struct FreeDeleter {
  void operator()(void* p) const noexcept;
};

/// An owned, aligned, uninitialised byte block, optionally charged to a budget.
class AlignedBlock {
 public:
  AlignedBlock() = default;
  AlignedBlock(size_t bytes, size_t alignment = 64, MemoryBudget* budget = nullptr,
               std::string category = {});
  AlignedBlock(AlignedBlock&& other) noexcept;
  AlignedBlock& operator=(AlignedBlock&& other) noexcept;
  ~AlignedBlock();

  std::byte* data() const { return static_cast<std::byte*>(ptr_.get()); }
  size_t size() const { return size_; }
  template <typename T>
  std::span<T> as() const {
    return {reinterpret_cast<T*>(ptr_.get()), size_ / sizeof(T)};
  }

 private:
  void release_charge() noexcept;
  std::unique_ptr<void, FreeDeleter> ptr_;
  size_t size_ = 0;
  MemoryBudget* budget_ = nullptr;
  std::string category_;
};

/// Peak resident set size of this process in bytes (from getrusage).
uint64_t peak_rss_bytes();
/// Starts a new peak resident set measurement (Linux: /proc/self/clear_refs);
/// false when the system does not allow it.
bool reset_peak_rss();
/// Peak resident set size since the last reset_peak_rss() (VmHWM), bytes.
uint64_t peak_rss_since_reset_bytes();
/// Current resident set size in bytes (from /proc/self/statm).
uint64_t current_rss_bytes();

}  // namespace glmrt
