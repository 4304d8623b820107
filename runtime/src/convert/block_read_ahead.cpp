#include "block_read_ahead.h"

#include <glmrt/base/error.h>

namespace glmrt {

BlockReadAhead::BlockReadAhead(SourceBlockReader& reader, std::vector<SourceBlock> blocks,
                               std::function<void(std::span<const std::byte>)> on_read)
    : reader_(reader), blocks_(std::move(blocks)), on_read_(std::move(on_read)) {
  if (!blocks_.empty()) reader_thread_ = std::thread([this] { read_all(); });
}

BlockReadAhead::~BlockReadAhead() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (reader_thread_.joinable()) reader_thread_.join();
}

void BlockReadAhead::read_all() {
  for (size_t index = 0; index < blocks_.size(); ++index) {
    {
      // Block `index` goes into the slot of block index - kSlots, which is
      // free once the block after that one has been handed out.
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || index + 2 <= taken_ + kSlots; });
      if (stop_) return;
    }
    const int slot = static_cast<int>(index % kSlots);
    const SourceBlock& b = blocks_[index];
    std::span<const std::byte> bytes;
    std::exception_ptr error;
    try {
      bytes = b.source->read_raw(reader_, slot, b.first, b.rows);
      if (on_read_) on_read_(bytes);
    } catch (...) {
      error = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      spans_[slot] = bytes;
      error_ = error;
      read_ = index + 1;
    }
    changed_.notify_all();
    if (error) return;
  }
}

std::span<const std::byte> BlockReadAhead::next(const SourceRows& source, int64_t first,
                                                int64_t rows) {
  std::unique_lock lock(mutex_);
  const size_t index = taken_;
  if (index >= blocks_.size() || blocks_[index].source != &source ||
      blocks_[index].first != first || blocks_[index].rows != rows)
    fail("BlockReadAhead: block {} asked out of the planned order (rows [{}, {}))", index, first,
         first + rows);
  ++taken_;
  changed_.notify_all();  // the previous block's slot is free
  changed_.wait(lock, [&] { return read_ > index || error_; });
  if (read_ <= index || (error_ && read_ == index + 1)) std::rethrow_exception(error_);
  return spans_[index % kSlots];
}

}  // namespace glmrt
