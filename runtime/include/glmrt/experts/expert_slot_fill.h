// What happens to an expert's bytes once its reads are done: checked (no NaN
// or infinity reaches the kernels), converted when the checkpoint is not in
// the kernels' layout, and seen by the kernels as views into the slot.
#pragma once

#include <glmrt/experts/expert_slot_plan.h>
#include <glmrt/plugin/weight_format.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

namespace glmrt {

/// A routed expert as the kernels see it: views into its slot.
struct Expert {
  glmrt_weight_view gate{}, up{}, down{};
};

/// Where a check failure is reported: the expert and the files.
struct ExpertSite {
  int layer = 0;
  int32_t id = 0;
  const std::vector<std::filesystem::path>* files = nullptr;
};

/// An expert read straight into `slot` (plan.direct): moves scales that
/// landed unaligned and checks every scale, and every float weight used in
/// place, is finite, and that ggml blocks used in place dequantize to finite
/// values (read from their scales). Throws naming the tensor, row and file
/// offset.
void finish_direct_expert(const ExpertSlotPlan& plan, std::byte* slot, const ExpertSite& site);

/// An expert read into `staging`: checks and converts every matrix into
/// `slot` (float matrices quantized at the plan's type, rows in parallel;
/// pre-quantized ones copied). `row_scratch` holds at least
/// threads x (widest matrix's columns) floats. Throws naming the tensor, row,
/// column and file offset of the first NaN or infinity.
void convert_expert(const ExpertSlotPlan& plan, std::span<const std::byte> staging, std::byte* slot,
                    std::span<float> row_scratch, int threads, const ExpertSite& site);

/// The kernels' views of an expert held in `slot`.
Expert expert_views(const ExpertSlotPlan& plan, const std::byte* slot);

}  // namespace glmrt
