#include <glmrt/experts/read_ahead_staging.h>
#include <glmrt/experts/widened_read.h>

#include <algorithm>

namespace glmrt {

ReadAheadStaging::ReadAheadStaging(int buffers, uint64_t read_bytes, MemoryBudget* budget)
    : capacity_(std::max(buffers, 0)), read_bytes_(read_bytes), budget_(budget) {
  memory_.reserve(static_cast<size_t>(capacity_));
}

uint64_t ReadAheadStaging::bytes_for(int buffers, uint64_t read_bytes) {
  return static_cast<uint64_t>(std::max(buffers, 0)) * align_up(read_bytes, 4096);
}

int ReadAheadStaging::take(ExpertLayerPool& owner, int /*slot*/) {
  for (size_t b = 0; b < owner_.size(); ++b)
    if (!owner_[b]) {
      owner_[b] = &owner;
      return static_cast<int>(b);
    }
  if (static_cast<int>(memory_.size()) >= capacity_) return -1;
  memory_.emplace_back(read_bytes_, budget_, "expert staging");
  owner_.push_back(&owner);
  return static_cast<int>(memory_.size()) - 1;
}

bool ReadAheadStaging::has_free() const {
  return static_cast<int>(memory_.size()) < capacity_ ||
         std::find(owner_.begin(), owner_.end(), nullptr) != owner_.end();
}

std::span<const std::byte> ReadAheadStaging::bytes(int buffer) const {
  const HugePageBlock& block = memory_[static_cast<size_t>(buffer)];
  return {block.data(), block.size()};
}

void ReadAheadStaging::release(int buffer) {
  owner_[static_cast<size_t>(buffer)] = nullptr;
}

std::vector<ExpertLayerPool*> ReadAheadStaging::owners() const {
  std::vector<ExpertLayerPool*> out;
  for (ExpertLayerPool* o : owner_)
    if (o && std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
  return out;
}

}  // namespace glmrt
