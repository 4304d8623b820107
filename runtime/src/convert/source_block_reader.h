// The conversion's reads of source tensors: O_DIRECT into 2 MiB-aligned
// huge-page buffers, so the drive writes straight into them at its full rate
// and no CPU time goes to copying out of the page cache (at BF16 -> int4 that
// copy was an eighth of the conversion's CPU). Where the filesystem refuses
// O_DIRECT (tmpfs, some network filesystems) the same reads go buffered.
#pragma once

#include <glmrt/base/huge_pages.h>
#include <glmrt/model_files/safetensors.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

class SourceBlockReader {
 public:
  static constexpr int kSlots = 4;  // one block decoded while up to three are read

  /// Buffers for blocks of up to `max_block_bytes` (plus the alignment
  /// window around them). Source files are opened on first use.
  SourceBlockReader(const TensorDirectory& dir, uint64_t max_block_bytes);
  ~SourceBlockReader();
  SourceBlockReader(const SourceBlockReader&) = delete;
  SourceBlockReader& operator=(const SourceBlockReader&) = delete;

  /// Bytes [offset, offset + size) of tensor `t`'s data into buffer `slot`;
  /// the span stays valid until the slot is read into again. Reads run one at
  /// a time (from any thread: the next is started after the last is done). A short
  /// read (a file truncated after it was opened) throws naming file and tensor.
  std::span<const std::byte> read(int slot, const TensorInfo& t, uint64_t offset, uint64_t size);

  /// Whether the reads so far went through O_DIRECT (false after a fallback).
  bool direct() const { return direct_; }

 private:
  int direct_fd(size_t file_index);
  std::span<const std::byte> read_buffered(int slot, const TensorInfo& t, uint64_t begin,
                                           uint64_t size);

  const TensorDirectory& dir_;
  uint64_t capacity_ = 0;
  std::array<HugePageBlock, kSlots> buffers_;
  std::vector<int> direct_fds_;  // per source file: -2 not opened yet, -1 buffered
  bool direct_ = true;
};

}  // namespace glmrt
