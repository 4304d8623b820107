// Memory for the big, long-lived buffers the disk reads into (expert slots):
// 2 MiB-aligned anonymous mappings advised MADV_HUGEPAGE. A 19 MB O_DIRECT
// read into huge pages reaches the drive's full speed; into 4 KiB pages the
// block layer splits it at the device's segment limit and loses up to half.
#pragma once

#include <glmrt/base/memory.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace glmrt {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

class HugePageBlock {
 public:
  HugePageBlock() = default;
  /// Maps `bytes` (rounded up to 4 KiB, the amount charged to `budget` under
  /// `category`) at a 2 MiB boundary and asks for transparent huge pages.
  /// Throws glmrt::Error naming the category when the budget or the system
  /// refuses. The memory is untouched: pages arrive on first write (or read
  /// into it).
  HugePageBlock(size_t bytes, MemoryBudget* budget, std::string category);
  HugePageBlock(HugePageBlock&& other) noexcept;
  HugePageBlock& operator=(HugePageBlock&& other) noexcept;
  HugePageBlock(const HugePageBlock&) = delete;
  HugePageBlock& operator=(const HugePageBlock&) = delete;
  ~HugePageBlock();

  /// Faults every page in, writable, now (MADV_POPULATE_WRITE): the kernel
  /// zeroes them here instead of inside the first read into the block. The
  /// bytes are left as they are, so it is safe beside a read into the block.
  /// False where the kernel cannot (before Linux 5.14) or memory ran out.
  bool populate() noexcept;
  /// populate() of the bytes [offset, offset + bytes) (clamped to the block).
  bool populate(size_t offset, size_t bytes) noexcept;
  /// Charges a block mapped without a budget to `budget` under `category`
  /// (nothing without a budget). Throws glmrt::Error when the budget refuses.
  void charge_to(MemoryBudget* budget, std::string category);

  /// Charged to a budget (at mapping or by charge_to).
  bool charged() const { return budget_ != nullptr; }
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  size_t size_ = 0;  // bytes mapped and charged
  MemoryBudget* budget_ = nullptr;
  std::string category_;
};

}  // namespace glmrt
