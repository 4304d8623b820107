#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace glmrt {
namespace {

constexpr size_t kSmallPage = 4096;

size_t round_up(size_t value, size_t unit) {
  return (value + unit - 1) / unit * unit;
}

}  // namespace

HugePageBlock::HugePageBlock(size_t bytes, MemoryBudget* budget, std::string category)
    : size_(round_up(bytes == 0 ? 1 : bytes, kSmallPage)),
      budget_(budget),
      category_(std::move(category)) {
  if (budget_) budget_->charge(category_, size_);
  // Map one huge page more than needed and trim both ends, so the block
  // starts on a 2 MiB boundary whatever address the kernel picks.
  const size_t mapped = size_ + kHugePageBytes;
  void* raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    const int error = errno;
    if (budget_) budget_->release(category_, size_);
    budget_ = nullptr;
    fail("out of memory mapping {} bytes for {}: {}", size_, category_, std::strerror(error));
  }
  auto* start = static_cast<std::byte*>(raw);
  const auto address = reinterpret_cast<uintptr_t>(start);
  const size_t lead = round_up(address, kHugePageBytes) - address;
  if (lead) ::munmap(start, lead);
  const size_t tail = mapped - lead - size_;
  if (tail) ::munmap(start + lead + size_, tail);
  data_ = start + lead;
  // Only a hint: without transparent huge pages the block still works.
  ::madvise(data_, size_, MADV_HUGEPAGE);
}

bool HugePageBlock::populate() noexcept {
  return populate(0, size_);
}

bool HugePageBlock::populate(size_t offset, size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  if (!data_ || offset >= size_) return false;
  const size_t end = offset + std::min(bytes, size_ - offset);
  // A huge page per call: the mmap lock is let go between them, so the
  // process's other faults and mappings do not queue behind a whole slot.
  for (size_t at = offset; at < end; at += kHugePageBytes)
    if (::madvise(data_ + at, std::min(kHugePageBytes, end - at), MADV_POPULATE_WRITE) != 0)
      return false;
  return true;
#else
  (void)offset;
  (void)bytes;
  return false;
#endif
}

void HugePageBlock::charge_to(MemoryBudget* budget, std::string category) {
  if (budget_) fail("{} bytes of {} are charged already", size_, category_);
  if (!budget) return;
  budget->charge(category, size_);
  budget_ = budget;
  category_ = std::move(category);
}

HugePageBlock::HugePageBlock(HugePageBlock&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      budget_(std::exchange(other.budget_, nullptr)),
      category_(std::move(other.category_)) {}

HugePageBlock& HugePageBlock::operator=(HugePageBlock&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    budget_ = std::exchange(other.budget_, nullptr);
    category_ = std::move(other.category_);
  }
  return *this;
}

HugePageBlock::~HugePageBlock() {
  release();
}

void HugePageBlock::release() noexcept {
  if (data_) ::munmap(data_, size_);
  if (budget_) budget_->release(category_, size_);
  data_ = nullptr;
  budget_ = nullptr;
  size_ = 0;
}

}  // namespace glmrt
