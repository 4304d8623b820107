#include "weight_checks.h"

namespace glmrt::kernels_scalar {

std::string element_name(uint32_t element_type) {
  const char* name = plugin::element_type_name(element_type);
  return name ? name : "element type " + std::to_string(element_type);
}

std::string check_format(const glmrt_weight_format& format) {
  if (format.struct_size < sizeof(glmrt_weight_format))
    return "weight format struct_size " + std::to_string(format.struct_size) +
           " is smaller than the " + std::to_string(sizeof(glmrt_weight_format)) +
           " bytes of ABI 1.0";
  if (plugin::element_type_name(format.element_type) == nullptr)
    return element_name(format.element_type) +
           " is not supported by kernels-scalar (it supports f32, bf16, int8, int4, int3, int2, "
           "the two-level int4-k32, int3-k32, int2-k16 and ggml's weight types f16, q8_0 ... "
           "mxfp4)";
  if (format.packing != 0)
    return "packing " + std::to_string(format.packing) + " of " +
           element_name(format.element_type) +
           " is not supported by kernels-scalar (only the documented packing 0)";
  if (plugin::is_two_level(format.element_type) && format.group_size != plugin::kTwoLevelBlock)
    return "group_size " + std::to_string(format.group_size) + " given for two-level " +
           element_name(format.element_type) + " weights, whose f32 scales cover " +
           std::to_string(plugin::kTwoLevelBlock) + " inputs each (expected that)";
  if (plugin::is_ggml_blocks(format.element_type) && format.group_size != 0)
    return "group_size " + std::to_string(format.group_size) + " given for " +
           element_name(format.element_type) +
           " weights, whose scales are inside their ggml blocks (expected 0)";
  if (!plugin::is_quantized(format.element_type) && format.group_size != 0)
    return "group_size " + std::to_string(format.group_size) + " given for " +
           element_name(format.element_type) + " weights, which carry no scales (expected 0)";
  return {};
}

std::string check_view(const float* x, int64_t S, const glmrt_weight_view& w, const float* y) {
  if (std::string problem = check_format(w.format); !problem.empty()) return problem;
  if (S < 0 || w.rows < 0 || w.cols < 0)
    return "negative shape: S=" + std::to_string(S) + " rows=" + std::to_string(w.rows) +
           " cols=" + std::to_string(w.cols);
  if (S == 0 || w.rows == 0) return {};
  if (!x || !y) return "x and y must not be NULL";
  const int64_t block = plugin::ggml_block_values(w.format.element_type);
  if (w.cols % block != 0)
    return std::to_string(w.cols) + " inputs are not a whole number of " +
           element_name(w.format.element_type) + " blocks of " + std::to_string(block) + " values";
  const int64_t row_bytes = plugin::packed_row_bytes(w.format.element_type, w.cols);
  if (w.rows > 1 && w.row_stride_bytes < row_bytes)
    return "row_stride_bytes " + std::to_string(w.row_stride_bytes) + " is smaller than the " +
           std::to_string(row_bytes) + " bytes a row of " + std::to_string(w.cols) + " " +
           element_name(w.format.element_type) + " values takes";
  if (w.cols > 0 && !w.data) return "weight data must not be NULL";
  if (plugin::is_quantized(w.format.element_type) && !w.scales)
    return element_name(w.format.element_type) + " weights need scales, got NULL";
  return {};
}

}  // namespace glmrt::kernels_scalar
