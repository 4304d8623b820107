#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/base/byte_size.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace glmrt {

void MemoryBudget::charge(const std::string& category, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  uint64_t now = used_.load() + bytes;
  const uint64_t limit = limit_.load();
  if (limit != 0 && now > limit) {
    // format_byte_size: a request of a few KiB must not read "0.0 MiB".
    fail(
        "memory budget exceeded: {} needs {} more, {} of {} already used (raise memory.budget "
        "in the profile or lower precision / expert_cache)",
        category, format_byte_size(bytes), format_byte_size(used_.load()), format_byte_size(limit));
  }
  used_ = now;
  if (now > peak_.load()) peak_ = now;
  categories_[category] += bytes;
}

void MemoryBudget::release(const std::string& category, uint64_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  used_ -= bytes;
  auto it = categories_.find(category);
  if (it != categories_.end()) it->second -= bytes;
}

std::map<std::string, uint64_t> MemoryBudget::by_category() const {
  std::lock_guard lock(mutex_);
  return categories_;
}

void FreeDeleter::operator()(void* p) const noexcept {
  std::free(p);
}

AlignedBlock::AlignedBlock(size_t bytes, size_t alignment, MemoryBudget* budget,
                           std::string category)
    : size_(bytes), budget_(budget), category_(std::move(category)) {
  if (budget_) budget_->charge(category_, bytes);
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (!p) {
    release_charge();
    fail("out of memory allocating {} bytes for {}", bytes,
         category_.empty() ? "a buffer" : category_);
  }
  ptr_.reset(p);
}

AlignedBlock::AlignedBlock(AlignedBlock&& other) noexcept
    : ptr_(std::move(other.ptr_)),
      size_(std::exchange(other.size_, 0)),
      budget_(std::exchange(other.budget_, nullptr)),
      category_(std::move(other.category_)) {}

AlignedBlock& AlignedBlock::operator=(AlignedBlock&& other) noexcept {
  if (this != &other) {
    release_charge();
    ptr_ = std::move(other.ptr_);
    size_ = std::exchange(other.size_, 0);
    budget_ = std::exchange(other.budget_, nullptr);
    category_ = std::move(other.category_);
  }
  return *this;
}

AlignedBlock::~AlignedBlock() {
  release_charge();
}

void AlignedBlock::release_charge() noexcept {
  if (budget_) budget_->release(category_, size_);
  budget_ = nullptr;
}

uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;  // 5: reset the peak RSS (Linux 4.0+)
  return std::fclose(f) == 0 && ok;
}

uint64_t peak_rss_since_reset_bytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return peak_rss_bytes();
  char line[256];
  unsigned long kib = 0;
  bool found = false;
  while (std::fgets(line, sizeof(line), f))
    if (std::sscanf(line, "VmHWM: %lu kB", &kib) == 1) {
      found = true;
      break;
    }
  std::fclose(f);
  return found ? static_cast<uint64_t>(kib) * 1024 : peak_rss_bytes();
}

uint64_t current_rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages_total = 0, pages_resident = 0;
  int n = std::fscanf(f, "%lu %lu", &pages_total, &pages_resident);
  std::fclose(f);
  return n == 2 ? pages_resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace glmrt
