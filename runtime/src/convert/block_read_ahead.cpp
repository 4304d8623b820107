#include "block_read_ahead.h"

#include <glmrt/base/error.h>

namespace glmrt {

BlockReadAhead::BlockReadAhead(SourceBlockReader& reader, std::vector<SourceBlock> blocks)
    : reader_(reader), blocks_(std::move(blocks)) {
  if (!blocks_.empty()) start(0);
}

BlockReadAhead::~BlockReadAhead() {
  if (reading_.valid()) reading_.wait();
}

void BlockReadAhead::start(size_t index) {
  const int slot = static_cast<int>(index % SourceBlockReader::kSlots);
  reading_ = std::async(std::launch::async, [this, index, slot] {
    const SourceBlock& b = blocks_[index];
    spans_[slot] = b.source->read_raw(reader_, slot, b.first, b.rows);
  });
}

std::span<const std::byte> BlockReadAhead::next(const SourceRows& source, int64_t first,
                                                int64_t rows) {
  const size_t index = taken_++;
  if (index >= blocks_.size() || blocks_[index].source != &source ||
      blocks_[index].first != first || blocks_[index].rows != rows)
    fail("BlockReadAhead: block {} asked out of the planned order (rows [{}, {}))", index, first,
         first + rows);
  reading_.get();
  if (index + 1 < blocks_.size()) start(index + 1);
  return spans_[index % SourceBlockReader::kSlots];
}

}  // namespace glmrt
