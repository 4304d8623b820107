// The reads of one output file's source blocks, run on a reader thread as far
// ahead of the block being encoded as the reader's buffers allow, across
// tensor boundaries. Reading one block ahead left the drive idle whenever the
// next read was late to start (the encoding threads hold both cores), and the
// conversion waited on it: a queue of reads keeps the drive busy.
#pragma once

#include <glmrt/convert/source_rows.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "source_block_reader.h"

namespace glmrt {

struct SourceBlock {
  const SourceRows* source = nullptr;
  int64_t first = 0, rows = 0;
};

class BlockReadAhead {
 public:
  /// Starts reading at once, up to kSlots - 1 blocks ahead; `on_read` (when
  /// given) gets each block's bytes on the reading thread, in order, before
  /// next() hands them out.
  BlockReadAhead(SourceBlockReader& reader, std::vector<SourceBlock> blocks,
                 std::function<void(std::span<const std::byte>)> on_read = {});
  ~BlockReadAhead();  // stops the reader after its read in flight
  BlockReadAhead(const BlockReadAhead&) = delete;
  BlockReadAhead& operator=(const BlockReadAhead&) = delete;

  /// The next block, in order, once read (rethrowing its read's error). Its
  /// bytes stay valid until the following call, which frees its buffer.
  std::span<const std::byte> next(const SourceRows& source, int64_t first, int64_t rows);

 private:
  static constexpr int kSlots = SourceBlockReader::kSlots;
  void read_all();

  SourceBlockReader& reader_;
  std::vector<SourceBlock> blocks_;
  std::function<void(std::span<const std::byte>)> on_read_;
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t taken_ = 0;  // blocks handed out by next()
  size_t read_ = 0;   // blocks read (or failed)
  bool stop_ = false;
  std::span<const std::byte> spans_[kSlots];
  std::exception_ptr error_;  // the first failed read; later blocks are not read
  std::thread reader_thread_;
};

}  // namespace glmrt
