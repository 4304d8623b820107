// y[S, O] = x[S, I] . W^T with AVX-512. Rows are split among the host's
// threads through its parallel_for service (an out-of-tree plugin does not
// assume the host's OpenMP). Every format goes through f32 FMAs on a decoded
// row, except per-row int8 on VNNI CPUs: x is quantized to int8 once per call
// (one scale per row) and rows meet it with VPDPBUSD.
#include "avx512_kernels.h"

#include "weight_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

namespace avx512_example {
namespace {

using glmrt::plugin::Kernels;

// Lane sums through memory: GCC 12's _mm512_reduce_add_* and 256-bit extracts
// warn about their own undefined placeholders.
float sum_lanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

int32_t sum_lanes(__m512i v) {
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, v);
  int32_t sum = 0;
  for (int32_t lane : lanes) sum += lane;
  return sum;
}

float dot_f32(const float* a, const float* b, int64_t n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  for (; i < n; i += 16) {  // masked loads read nothing past n
    const __mmask16 mask = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, a + i), _mm512_maskz_loadu_ps(mask, b + i),
                           acc0);
  }
  return sum_lanes(_mm512_add_ps(acc0, acc1));
}

/// sum(x_u8[i] * w[i]) and sum(w[i]) over n int8 inputs, with VNNI.
__attribute__((target("avx512vnni"))) void dot_u8_s8(const uint8_t* x, const int8_t* w, int64_t n,
                                                     int32_t* dot, int32_t* w_sum) {
  __m512i acc = _mm512_setzero_si512(), sum = _mm512_setzero_si512();
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 mask = n - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (n - i)) - 1;
    const __m512i wv = _mm512_maskz_loadu_epi8(mask, w + i);
    acc = _mm512_dpbusd_epi32(acc, _mm512_maskz_loadu_epi8(mask, x + i), wv);
    sum = _mm512_dpbusd_epi32(sum, ones, wv);
  }
  *dot = sum_lanes(acc);
  *w_sum = sum_lanes(sum);
}

/// A host allocation released on scope exit.
class HostMemory {
 public:
  HostMemory(const glmrt_host_services& host, size_t bytes)
      : host_(host), data_(host.alloc(host.context, bytes, 64)) {}
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

struct Call {
  const glmrt_host_services* host;
  const float* x;
  int64_t S;
  const glmrt_weight_view* w;
  float* y;
  const uint8_t* x_u8;       // VNNI path: x / scale + 128, [S, I]
  const float* x_scale;      // VNNI path: [S]
  std::atomic<bool> failed;  // a chunk could not get its scratch row
};

void decoded_rows(void* context, int64_t begin, int64_t end) {
  Call& call = *static_cast<Call*>(context);
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

void int8_rows_vnni(void* context, int64_t begin, int64_t end) {
  Call& call = *static_cast<Call*>(context);
  const glmrt_weight_view& w = *call.w;
  for (int64_t o = begin; o < end; ++o) {
    const auto* row = reinterpret_cast<const int8_t*>(static_cast<const uint8_t*>(w.data) +
                                                      o * w.row_stride_bytes);
    for (int64_t s = 0; s < call.S; ++s) {
      int32_t dot = 0, w_sum = 0;
      dot_u8_s8(call.x_u8 + s * w.cols, row, w.cols, &dot, &w_sum);
      // x_u8 = q + 128, so sum(q w) = dot - 128 sum(w).
      const float q_dot = static_cast<float>(dot - 128 * w_sum);
      call.y[s * w.rows + o] = q_dot * call.x_scale[s] * w.scales[o];
    }
  }
}

class Avx512Kernels final : public Kernels {
 public:
  Avx512Kernels(const glmrt_host_services& host, const Options& options)
      : host_(host), options_(options) {}

  bool supports(const glmrt_weight_format& f) const noexcept override {
    if (f.struct_size < sizeof(glmrt_weight_format) || f.packing != 0) return false;
    if (f.element_type == GLMRT_F32 || f.element_type == GLMRT_BF16) return f.group_size == 0;
    return glmrt::plugin::is_quantized(f.element_type);
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
    Call call{&host_, x, S, &w, y, nullptr, nullptr, {false}};
    // int32 sums stay exact up to 2^31 / (255 * 128) inputs.
    const bool vnni = options_.use_vnni && w.format.element_type == GLMRT_I8 &&
                      w.format.group_size == 0 && w.cols <= 65536;
    if (vnni) {
      HostMemory x_u8(host_, static_cast<size_t>(S * w.cols));
      HostMemory x_scale(host_, static_cast<size_t>(S) * sizeof(float));
      if (!x_u8 || !x_scale) return fail(GLMRT_ERR_OUT_OF_MEMORY, "no memory for int8 activations");
      quantize_rows(x, S, w.cols, x_u8.as<uint8_t>(), x_scale.as<float>());
      call.x_u8 = x_u8.as<uint8_t>();
      call.x_scale = x_scale.as<float>();
      host_.parallel_for(host_.context, w.rows, 16, &int8_rows_vnni, &call);
    } else {
      host_.parallel_for(host_.context, w.rows, 4, &decoded_rows, &call);
    }
    if (call.failed) return fail(GLMRT_ERR_OUT_OF_MEMORY, "no memory for a decoded row");
    return GLMRT_OK;
  }

  const char* last_error() const noexcept override { return error_; }
  void destroy() noexcept override { delete this; }

 private:
  ~Avx512Kernels() = default;

  /// One int8 scale per activation row (max |x| / 127), stored shifted to
  /// unsigned (q + 128) because VPDPBUSD multiplies unsigned by signed bytes.
  static void quantize_rows(const float* x, int64_t S, int64_t I, uint8_t* out, float* scales) {
    for (int64_t s = 0; s < S; ++s) {
      const float* row = x + s * I;
      float amax = 0.0f;
      for (int64_t i = 0; i < I; ++i) amax = std::max(amax, std::abs(row[i]));
      scales[s] = amax / 127.0f;
      const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
      for (int64_t i = 0; i < I; ++i)
        out[s * I + i] =
            static_cast<uint8_t>(static_cast<int>(std::nearbyint(row[i] * inverse)) + 128);
    }
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
