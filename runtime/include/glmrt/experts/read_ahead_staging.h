// The buffers reads ahead of experts that need converting land in (their
// checkpoint is not in the kernels' layout: BF16 on disk under int4, say):
// such an expert cannot be read into its slot, so each read ahead takes one
// of these, and the expert is converted into its slot from it when a step
// first uses it (at its arrival if the step is already waiting) — by the
// thread that runs the model, as every conversion is (its rows are shared out
// over the compute team), never by an io plugin's reader threads, which the
// plugin owns. A guess no step used is never converted: when a buffer is
// needed, a landed one no step wants is dropped. The buffer is free again as
// soon as the conversion is done or the guess dropped. A step's own misses
// take a free one too (expert_step.h): read side by side and ahead of the
// next layer's guesses, instead of one by one through the staging buffer.
//
// As many buffers as a layer has read-ahead slots, allocated when first
// taken, charged to the budget under "expert staging" (the memory plan
// counts them with the read-ahead slots).
#pragma once

#include <glmrt/base/huge_pages.h>
#include <glmrt/base/memory.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

class ExpertLayerPool;

class ReadAheadStaging {
 public:
  /// No buffers: nothing that needs converting is read ahead.
  ReadAheadStaging() = default;
  /// Room for `buffers` reads of up to `read_bytes` each.
  ReadAheadStaging(int buffers, uint64_t read_bytes, MemoryBudget* budget);

  /// The bytes `buffers` such buffers take (page-aligned), as charged.
  static uint64_t bytes_for(int buffers, uint64_t read_bytes);

  int capacity() const { return capacity_; }
  /// Whether take() would give a buffer.
  bool has_free() const;
  /// A free buffer for the read ahead into `owner`'s slot `slot`, or -1
  /// when every one is taken. Throws when a new one cannot be allocated.
  int take(ExpertLayerPool& owner, int slot);
  std::byte* data(int buffer) const { return memory_[static_cast<size_t>(buffer)].data(); }
  std::span<const std::byte> bytes(int buffer) const;
  void release(int buffer);
  /// The pools holding a buffer now (each once), so they can be reaped.
  std::vector<ExpertLayerPool*> owners() const;

 private:
  int capacity_ = 0;
  uint64_t read_bytes_ = 0;
  MemoryBudget* budget_ = nullptr;
  std::vector<HugePageBlock> memory_;    // allocated on first take
  std::vector<ExpertLayerPool*> owner_;  // by buffer, null = free
};

}  // namespace glmrt
