// The Kernels object: checks each call's arguments, then routes it to the
// integer kernels (int8 activations) or the float kernels.
#include "avx2_kernels.h"

#include "activation_quantizer.h"
#include "float_matmul.h"
#include "host_buffer.h"
#include "int_formats.h"
#include "int_matmul.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

namespace glmrt::kernels_avx2 {
namespace {

const char* element_type_name(uint32_t type) {
  const char* name = plugin::element_type_name(type);
  return name ? name : "unknown element type";
}

class Avx2Kernels final : public plugin::Kernels {
 public:
  Avx2Kernels(const glmrt_host_services& host, const Settings& settings)
      : settings_(settings), n_threads_(std::max(1, host.n_threads)), scratch_(&host) {}

  bool supports(const glmrt_weight_format& format) const noexcept override {
    if (format.struct_size < sizeof(glmrt_weight_format) || format.packing != 0) return false;
    switch (format.element_type) {
      case GLMRT_F32:
      case GLMRT_BF16:
        return format.group_size == 0;  // no scales, so no groups
      case GLMRT_I8:
      case GLMRT_I4:
      case GLMRT_I2:
        return true;
      default:
        return false;
    }
  }

  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override {
    try {
      if (const glmrt_status status = check_arguments(x, S, w, y); status != GLMRT_OK)
        return status;
      if (S == 0 || w.rows == 0) return GLMRT_OK;
      if (w.cols == 0) {  // an empty sum
        std::fill(y, y + S * w.rows, 0.0f);
        return GLMRT_OK;
      }
      const uint32_t group_size = w.format.group_size;
      if (plugin::is_quantized(w.format.element_type) &&
          settings_.activations == ActivationMode::kInt8 && group_size % kBlockSize == 0) {
        switch (w.format.element_type) {
          case GLMRT_I8:
            return run_int<Int8Format>(x, S, w, y);
          case GLMRT_I4:
            return run_int<Int4Format>(x, S, w, y);
          default:
            return run_int<Int2Format>(x, S, w, y);
        }
      }
      return run_float(x, S, w, y);
    } catch (const std::bad_alloc&) {
      return fail(GLMRT_ERR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& e) {
      return fail(GLMRT_ERR_INTERNAL, e.what());
    } catch (...) {
      return fail(GLMRT_ERR_INTERNAL, "unknown error");
    }
  }

  const char* last_error() const noexcept override { return error_; }

  void destroy() noexcept override { delete this; }

 private:
  ~Avx2Kernels() = default;  // only destroy() ends the object

  glmrt_status check_arguments(const float* x, int64_t S, const glmrt_weight_view& w,
                               const float* y) noexcept {
    if (!supports(w.format))
      return fail(GLMRT_ERR_UNSUPPORTED,
                  "unsupported weight format: %s, group size %u, packing %u (struct_size %u)",
                  element_type_name(w.format.element_type), w.format.group_size, w.format.packing,
                  w.format.struct_size);
    if (S < 0 || w.rows < 0 || w.cols < 0)
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "bad shape: S = %lld, O = %lld, I = %lld",
                  static_cast<long long>(S), static_cast<long long>(w.rows),
                  static_cast<long long>(w.cols));
    const int64_t packed = plugin::packed_row_bytes(w.format.element_type, w.cols);
    if (w.rows > 1 && w.row_stride_bytes < packed)
      return fail(GLMRT_ERR_INVALID_ARGUMENT,
                  "row stride %lld bytes is shorter than a packed %s row of %lld inputs (%lld)",
                  static_cast<long long>(w.row_stride_bytes),
                  element_type_name(w.format.element_type), static_cast<long long>(w.cols),
                  static_cast<long long>(packed));
    if (S == 0 || w.rows == 0) return GLMRT_OK;
    if (!x || !y || (w.cols > 0 && !w.data))
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "null x, y or weight data");
    if (plugin::is_quantized(w.format.element_type) && !w.scales)
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "quantized %s weights without scales",
                  element_type_name(w.format.element_type));
    return GLMRT_OK;
  }

  template <class Format>
  glmrt_status run_int(const float* x, int64_t S, const glmrt_weight_view& w, float* y) {
    const int64_t group_size = w.format.group_size;
    const ActivationLayout layout = activation_layout<Format>(w.cols, group_size);
    const int64_t n_blocks = layout.steps * Format::kBlocksPerStep;
    ScratchPlan plan;
    const size_t values_at = plan.add(static_cast<size_t>(S * layout.row_bytes));
    const size_t scales_at =
        plan.add(static_cast<size_t>(S * layout.scales_per_row) * sizeof(float));
    const size_t sums_at = plan.add(static_cast<size_t>(S * layout.groups) * sizeof(float));
    const size_t groups_at = plan.add(static_cast<size_t>(n_blocks) * sizeof(int32_t));
    if (!scratch_.ensure(plan.total()))
      return fail(GLMRT_ERR_OUT_OF_MEMORY, "the host refused %zu bytes of activation scratch",
                  plan.total());
    IntMatmul problem;
    problem.weights = &w;
    problem.activations.layout = layout;
    problem.activations.values = reinterpret_cast<int8_t*>(scratch_.data() + values_at);
    problem.activations.lane_scales = reinterpret_cast<float*>(scratch_.data() + scales_at);
    problem.activations.group_sums = reinterpret_cast<float*>(scratch_.data() + sums_at);
    problem.S = S;
    problem.y = y;
    problem.n_threads = n_threads_;
    quantize_activations<Format>(x, S, w.cols, group_size, problem.activations);
    if (group_size > 0) {
      auto* block_group = reinterpret_cast<int32_t*>(scratch_.data() + groups_at);
      fill_block_groups(w.cols, group_size, n_blocks, block_group);
      problem.block_group = block_group;
    }
    int_matmul<Format>(problem);
    return GLMRT_OK;
  }

  glmrt_status run_float(const float* x, int64_t S, const glmrt_weight_view& w, float* y) {
    FloatMatmul problem;
    problem.weights = &w;
    problem.x = x;
    problem.S = S;
    problem.y = y;
    problem.n_threads = n_threads_;
    if (plugin::is_quantized(w.format.element_type)) {
      const size_t bytes =
          static_cast<size_t>(dequant_scratch_floats(w.cols, n_threads_)) * sizeof(float);
      if (!scratch_.ensure(bytes))
        return fail(GLMRT_ERR_OUT_OF_MEMORY, "the host refused %zu bytes of dequantization scratch",
                    bytes);
      problem.dequant_scratch = reinterpret_cast<float*>(scratch_.data());
    }
    float_matmul(problem);
    return GLMRT_OK;
  }

  template <typename... Args>
  glmrt_status fail(glmrt_status status, const char* format, Args... args) noexcept {
    if constexpr (sizeof...(Args) == 0) {
      std::snprintf(error_, sizeof(error_), "kernels-avx2: %s", format);
    } else {
      int written = std::snprintf(error_, sizeof(error_), "kernels-avx2: ");
      std::snprintf(error_ + written, sizeof(error_) - written, format, args...);
    }
    return status;
  }

  Settings settings_;
  int n_threads_;
  HostBuffer scratch_;
  char error_[256] = {};
};

}  // namespace

KernelsPtr make_avx2_kernels(const glmrt_host_services& host, const Settings& settings) {
  return KernelsPtr(new Avx2Kernels(host, settings));
}

}  // namespace glmrt::kernels_avx2
