// How one routed expert travels from its file into a slot, worked out once
// when the store is built: the reads (each widened to the io plugin's
// alignment, overlapping ones merged, each at an aligned place in its buffer)
// and where each matrix and its scales lie in the slot.
//
// An expert stored in the kernels' own layout (every matrix pre-quantized,
// U8 + `.qs` scales, or floats already at the profile's precision: F32 under
// f32, BF16 under bf16) is read straight into its slot and used where it
// lands: its matrices are views into the slot and nothing is copied (scales
// that land unaligned for floats are the one exception, a few KiB). Any other
// expert is read into a staging buffer and converted into its slot.
#pragma once

#include <glmrt/base/weight_precision.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/plugin/weight_format.h>

#include <array>
#include <cstdint>
#include <vector>

namespace glmrt {

/// One read, placed in its buffer (the slot, or the staging buffer).
struct SlotRead {
  int file = 0;
  WidenedRead span;
  uint64_t at = 0;  // where the widened read starts in the buffer (aligned)
};

/// One matrix of the expert as the kernels see it in the slot.
struct SlotMatrix {
  uint32_t type = GLMRT_F32;  // glmrt_element_type held in the slot
  int64_t rows = 0, cols = 0, row_bytes = 0;
  uint64_t data = 0;        // offset of row 0 in the slot
  uint64_t scales = 0;      // offset of the f32 scales [rows, groups per row] (quantized types)
  uint32_t group_size = 0;  // inputs sharing a scale; 0 = one scale per row
  /// Where the tensor's bytes are in the read buffer (the slot when direct).
  uint64_t source_values = 0, source_scales = 0;
};

/// Scales read into the slot at an offset not aligned for floats: copied
/// within the slot to an aligned place after the reads.
struct ScaleCopy {
  uint64_t from = 0, to = 0, bytes = 0;
};

struct ExpertSlotPlan {
  const ExpertLayout* layout = nullptr;
  /// Every matrix in the kernels' layout: the reads land in the slot,
  /// matrices are views into it. Otherwise the reads land in the staging buffer.
  bool direct = false;
  std::vector<SlotRead> reads;
  uint64_t read_bytes = 0;             // the reads' buffer size (aligned)
  std::array<SlotMatrix, 3> matrices;  // gate, up, down
  std::vector<ScaleCopy> scale_copies;
  uint64_t slot_bytes = 0;  // what the slot must hold
};

/// Plans `layout` for `channel` (alignment, file sizes) with converted
/// matrices at `precision` (per row or per group). Throws naming the tensor
/// when a range lies beyond its file.
ExpertSlotPlan plan_expert_slot(const ExpertLayout& layout, const IoChannel& channel,
                                WeightPrecision precision);

}  // namespace glmrt
