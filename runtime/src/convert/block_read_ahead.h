// The reads of one output file's source blocks, kept one block ahead of the
// block being encoded, across tensor boundaries: when a tensor's last block
// is being encoded the next tensor's first one is already on its way (with a
// read-ahead per tensor, every tensor's first read waited on the drive).
#pragma once

#include <glmrt/convert/source_rows.h>

#include <cstdint>
#include <future>
#include <span>
#include <vector>

#include "source_block_reader.h"

namespace glmrt {

struct SourceBlock {
  const SourceRows* source = nullptr;
  int64_t first = 0, rows = 0;
};

class BlockReadAhead {
 public:
  /// Starts reading blocks[0] at once.
  BlockReadAhead(SourceBlockReader& reader, std::vector<SourceBlock> blocks);
  ~BlockReadAhead();  // waits for a read in flight (it writes into the reader)
  BlockReadAhead(const BlockReadAhead&) = delete;
  BlockReadAhead& operator=(const BlockReadAhead&) = delete;

  /// The next block, in order, once read (rethrowing its read's error); the
  /// read of the one after it starts before this returns. Its bytes stay valid
  /// until the following call.
  std::span<const std::byte> next(const SourceRows& source, int64_t first, int64_t rows);

 private:
  void start(size_t index);

  SourceBlockReader& reader_;
  std::vector<SourceBlock> blocks_;
  size_t taken_ = 0;
  std::span<const std::byte> spans_[SourceBlockReader::kSlots];
  std::future<void> reading_;
};

}  // namespace glmrt
