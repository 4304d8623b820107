// y[S, O] = x[S, I] . W^T with AVX-512. Rows are split among the host's
// threads through its parallel_for service (an out-of-tree plugin does not
// assume the host's OpenMP). int8 and int4 weights meet int8 activations with
// VNNI where the CPU has it (int_matmul.cpp); every other format, and integer
// formats without VNNI, go through f32 FMAs on a decoded row.
#include "avx512_kernels.h"

#include "int_activations.h"
#include "int_matmul.h"
#include "simd.h"
#include "weight_rows.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <new>

namespace avx512_example {
namespace {

using glmrt::plugin::Kernels;

float dot_f32(const float* a, const float* b, int64_t n) {
  simde__m512 acc0 = simde_mm512_setzero_ps(), acc1 = simde_mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = simde_mm512_fmadd_ps(simde_mm512_loadu_ps(a + i), simde_mm512_loadu_ps(b + i), acc0);
    acc1 = simde_mm512_fmadd_ps(simde_mm512_loadu_ps(a + i + 16), simde_mm512_loadu_ps(b + i + 16),
                                acc1);
  }
  for (; i + 16 <= n; i += 16)
    acc0 = simde_mm512_fmadd_ps(simde_mm512_loadu_ps(a + i), simde_mm512_loadu_ps(b + i), acc0);
  float sum = sum_lanes(simde_mm512_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

/// A host allocation released on scope exit.
class HostMemory {
 public:
  HostMemory(const glmrt_host_services& host, size_t bytes)
      : host_(host), data_(host.alloc(host.context, std::max<size_t>(bytes, 64), 64)) {}
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory() {
    if (data_) host_.free(host_.context, data_);
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  const glmrt_host_services& host_;
  void* data_;
};

struct DecodedCall {
  const glmrt_host_services* host;
  const float* x;
  int64_t S;
  const glmrt_weight_view* w;
  float* y;
  std::atomic<bool> failed;  // a chunk could not get its scratch row
};

void decoded_rows(void* context, int64_t begin, int64_t end) {
  DecodedCall& call = *static_cast<DecodedCall*>(context);
  const glmrt_weight_view& w = *call.w;
  HostMemory row(*call.host, static_cast<size_t>(w.cols) * sizeof(float));
  if (!row) {
    call.failed = true;
    return;
  }
  for (int64_t o = begin; o < end; ++o) {
    decode_row(w, o, row.as<float>());
    for (int64_t s = 0; s < call.S; ++s)
      call.y[s * w.rows + o] = dot_f32(row.as<float>(), call.x + s * w.cols, w.cols);
  }
}

struct QuantizeCall {
  const float* x;
  int64_t cols;
  const IntActivations* out;
};

void quantize_rows(void* context, int64_t begin, int64_t end) {
  const QuantizeCall& call = *static_cast<const QuantizeCall*>(context);
  for (int64_t s = begin; s < end; ++s) quantize_activation_row(call.x, call.cols, s, *call.out);
}

class Avx512Kernels final : public Kernels {
 public:
  Avx512Kernels(const glmrt_host_services& host, const Options& options)
      : host_(host), options_(options) {}

  bool supports(const glmrt_weight_format& f) const noexcept override {
    if (f.struct_size < sizeof(glmrt_weight_format) || f.packing != 0) return false;
    if (f.element_type == GLMRT_F32 || f.element_type == GLMRT_BF16) return f.group_size == 0;
    // The integer types this plugin decodes, by name: is_quantized() grows
    // with every element type a newer SDK adds (int3, two-level scales).
    return f.element_type == GLMRT_I8 || f.element_type == GLMRT_I4 || f.element_type == GLMRT_I2;
  }

  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override {
    if (!supports(w.format)) return fail(GLMRT_ERR_UNSUPPORTED, "unsupported weight format");
    if (S < 0 || w.rows < 0 || w.cols < 0)
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "negative shape");
    if (w.rows > 1 &&
        w.row_stride_bytes < glmrt::plugin::packed_row_bytes(w.format.element_type, w.cols))
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "row stride shorter than a row");
    if (S == 0 || w.rows == 0) return GLMRT_OK;
    if (!x || !y || !w.data) return fail(GLMRT_ERR_INVALID_ARGUMENT, "null pointer");
    if (glmrt::plugin::is_quantized(w.format.element_type) && !w.scales)
      return fail(GLMRT_ERR_INVALID_ARGUMENT, "integer weights without scales");
    if (w.cols > 0 && uses_vnni(w.format)) return vnni_matmul(x, S, w, y);
    DecodedCall call{&host_, x, S, &w, y, {false}};
    host_.parallel_for(host_.context, w.rows, 4, &decoded_rows, &call);
    if (call.failed) return fail(GLMRT_ERR_OUT_OF_MEMORY, "no memory for a decoded row");
    return GLMRT_OK;
  }

  const char* last_error() const noexcept override { return error_; }
  void destroy() noexcept override { delete this; }

 private:
  ~Avx512Kernels() = default;

  /// int8 and int4, one scale per row or groups made of whole 32-input blocks.
  bool uses_vnni(const glmrt_weight_format& f) const {
    return options_.use_vnni && (f.element_type == GLMRT_I8 || f.element_type == GLMRT_I4) &&
           f.group_size % kBlockInputs == 0;
  }

  glmrt_status vnni_matmul(const float* x, int64_t S, const glmrt_weight_view& w, float* y) {
    const IntWeights type =
        w.format.element_type == GLMRT_I8 ? IntWeights::kInt8 : IntWeights::kInt4;
    const int per_step = inputs_per_step(type);
    const int64_t steps = (w.cols + per_step - 1) / per_step;
    const auto lane_bytes = static_cast<size_t>(S * steps * kLanes * 4);
    HostMemory values(host_, static_cast<size_t>(S * steps * per_step));
    HostMemory scales(host_, lane_bytes);
    HostMemory starts(host_, type == IntWeights::kInt4 ? lane_bytes : 0);
    const int64_t blocks = steps * (per_step / kBlockInputs);
    HostMemory block_group(host_, static_cast<size_t>(blocks) * sizeof(int32_t));
    if (!values || !scales || !starts || !block_group)
      return fail(GLMRT_ERR_OUT_OF_MEMORY, "no memory for the quantized activations");
    const int64_t group_size = w.format.group_size;
    if (group_size > 0) {  // blocks past the last input keep to the last group
      const int64_t last_group = (w.cols + group_size - 1) / group_size - 1;
      for (int64_t b = 0; b < blocks; ++b)
        block_group.as<int32_t>()[b] =
            static_cast<int32_t>(std::min(b * kBlockInputs / group_size, last_group));
    }
    const IntActivations activations{type, steps, values.as<uint8_t>(), scales.as<float>(),
                                     type == IntWeights::kInt4 ? starts.as<int32_t>() : nullptr};
    QuantizeCall quantize{x, w.cols, &activations};
    host_.parallel_for(host_.context, S, 1, &quantize_rows, &quantize);
    int_matmul(host_, IntMatmul{&w, &activations,
                                group_size > 0 ? block_group.as<int32_t>() : nullptr, S, y});
    return GLMRT_OK;
  }

  glmrt_status fail(glmrt_status status, const char* message) noexcept {
    std::snprintf(error_, sizeof(error_), "kernels-avx512: %s", message);
    return status;
  }

  const glmrt_host_services& host_;
  Options options_;
  char error_[160] = {};
};

}  // namespace

Kernels* make_avx512_kernels(const glmrt_host_services& host, const Options& options) {
  return new (std::nothrow) Avx512Kernels(host, options);
}

}  // namespace avx512_example
