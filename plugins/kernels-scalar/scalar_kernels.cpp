#include "scalar_kernels.h"

#include "weight_checks.h"

#include <ggml/ggml_blocks.h>
#include <parallel_work.h>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>
#include <vector>

namespace glmrt::kernels_scalar {
namespace {

/// Writes row `src` of `cols` values as f32 into `out`, without scales (for
/// quantized types these are the integers q, exact in f32). Returns where the
/// decoded row is: f32 rows that are already aligned are used in place.
const float* decode_row(uint32_t type, const std::byte* src, int64_t cols, float* out) {
  switch (type) {
    case GLMRT_F32:
      if (reinterpret_cast<uintptr_t>(src) % alignof(float) == 0)
        return reinterpret_cast<const float*>(src);
      std::memcpy(out, src, static_cast<size_t>(cols) * sizeof(float));
      return out;
    case GLMRT_BF16:
      for (int64_t i = 0; i < cols; ++i) {
        uint16_t half;
        std::memcpy(&half, src + 2 * i, sizeof(half));
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
      }
      return out;
    case GLMRT_I8:
      for (int64_t i = 0; i < cols; ++i) out[i] = static_cast<float>(static_cast<int8_t>(src[i]));
      return out;
    case GLMRT_I4:
      // Element 2k in the low nibble, 2k+1 in the high one, stored as v + 8.
      for (int64_t i = 0; i < cols; ++i) {
        const unsigned byte = std::to_integer<unsigned>(src[i >> 1]);
        const unsigned nibble = (i & 1) ? byte >> 4 : byte & 0x0F;
        out[i] = static_cast<float>(static_cast<int>(nibble) - 8);
      }
      return out;
    case GLMRT_I2:
      // Element 4k+j in bits 2j..2j+1, stored as v + 2.
      for (int64_t i = 0; i < cols; ++i) {
        const unsigned byte = std::to_integer<unsigned>(src[i >> 2]);
        const unsigned bits = (byte >> (2 * (i & 3))) & 0x03;
        out[i] = static_cast<float>(static_cast<int>(bits) - 2);
      }
      return out;
    case GLMRT_I3:
      // Blocks of 128: the low two bits as int2 packs them, then the high bits.
      for (int64_t i = 0; i < cols; ++i) {
        const unsigned stored =
            plugin::int3_stored_code(reinterpret_cast<const uint8_t*>(src), cols, i);
        out[i] = static_cast<float>(static_cast<int>(stored) - 4);
      }
      return out;
    default:
      // ggml blocks: their floats, scales applied, as ggml's reference has them.
      if (plugin::is_ggml_blocks(type) &&
          plugin_support::ggml::dequantize_row(plugin::ggml_type_of(type), src, cols, out))
        return out;
      return nullptr;  // excluded by check_format and check_view
  }
}

double dot(const float* a, const float* b, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

/// Output row o of one product, for all its S rows. `decoded` holds I floats
/// and, after them, one per scale group.
void row_product(const glmrt_matmul_product& p, int64_t o, float* decoded) {
  const glmrt_weight_view& w = p.w;
  const int64_t I = w.cols, O = w.rows;
  const int64_t x_stride = p.x_stride ? p.x_stride : I, y_stride = p.y_stride ? p.y_stride : O;
  const uint32_t type = w.format.element_type;
  const bool quantized = plugin::is_quantized(type);
  const int64_t group = quantized && w.format.group_size > 0 ? w.format.group_size : I;
  const int64_t n_groups = group > 0 ? (I + group - 1) / group : 0;
  const auto* data = static_cast<const std::byte*>(w.data);
  const std::byte* row_data = data + o * w.row_stride_bytes;
  // Decode the row once, then use it for all S inputs.
  const float* row = decode_row(plugin::code_type(type), row_data, I, decoded);
  const float* row_scales = quantized ? w.scales + o * n_groups : nullptr;
  int64_t scale_group = group, scale_groups = n_groups;
  if (plugin::is_two_level(type)) {
    // Each small group's scale, as if stored in f32: block scale x int8 code.
    scale_group = plugin::two_level_group(type);
    scale_groups = (I + scale_group - 1) / scale_group;
    float* group_scales = decoded + I;
    plugin::two_level_group_scales(type, row_data, I, row_scales, group_scales);
    row_scales = group_scales;
  }
  for (int64_t s = 0; s < p.S; ++s) {
    const float* xs = p.x + s * x_stride;
    double sum = 0;
    for (int64_t g = 0; g < scale_groups; ++g) {
      const int64_t begin = g * scale_group;
      const double part = dot(xs + begin, row + begin, std::min(scale_group, I - begin));
      sum += row_scales ? part * row_scales[g] : part;
    }
    p.y[s * y_stride + o] = static_cast<float>(sum);
  }
}

}  // namespace

bool ScalarKernels::supports(const glmrt_weight_format& format) const noexcept {
  return check_format(format).empty();
}

glmrt_status ScalarKernels::fail(glmrt_status status, std::string message) noexcept {
  error_ = std::move(message);
  return status;
}

glmrt_status ScalarKernels::matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                                   float* y) noexcept {
  glmrt_matmul_product product{};
  product.struct_size = sizeof(product);
  product.x = x;
  product.S = S;
  product.w = w;
  product.y = y;
  return run(&product, 1, "matmul");
}

glmrt_status ScalarKernels::grouped_matmul(const glmrt_matmul_product* products,
                                           size_t n) noexcept {
  return run(products, n, "grouped_matmul");
}

glmrt_status ScalarKernels::run(const glmrt_matmul_product* products, size_t n,
                                const char* call) noexcept {
  try {
    if (n > 0 && !products)
      return fail(GLMRT_ERR_INVALID_ARGUMENT, std::string(call) + ": NULL list");
    // Every output row of every product is one item: one parallel region
    // for the whole list, a row decoded once for all S rows of its product.
    std::vector<int64_t> first_row(n + 1, 0);
    int64_t widest = 1, work = 0;
    for (size_t i = 0; i < n; ++i) {
      const glmrt_matmul_product& p = products[i];
      if (p.struct_size < sizeof(glmrt_matmul_product))
        return fail(GLMRT_ERR_INVALID_ARGUMENT,
                    std::string("kernels-scalar ") + call + ": product " + std::to_string(i) +
                        " has struct_size " + std::to_string(p.struct_size));
      if (std::string problem = check_view(p.x, p.S, p.w, p.y); !problem.empty())
        return fail(
            check_format(p.w.format).empty() ? GLMRT_ERR_INVALID_ARGUMENT : GLMRT_ERR_UNSUPPORTED,
            std::string("kernels-scalar ") + call + ": " + problem);
      if (p.x_stride < 0 || p.y_stride < 0 || (p.x_stride > 0 && p.x_stride < p.w.cols) ||
          (p.y_stride > 0 && p.y_stride < p.w.rows))
        return fail(GLMRT_ERR_INVALID_ARGUMENT,
                    std::string("kernels-scalar ") + call + ": row strides " +
                        std::to_string(p.x_stride) + "/" + std::to_string(p.y_stride) +
                        " are shorter than the rows (" + std::to_string(p.w.cols) + "/" +
                        std::to_string(p.w.rows) + ")");
      first_row[i + 1] = first_row[i] + (p.S > 0 ? p.w.rows : 0);
      widest = std::max(widest, p.w.cols);
      work += p.S * p.w.rows * p.w.cols;
    }
    const int64_t total = first_row[n];
    if (total == 0) return GLMRT_OK;
    // Small lists run on the calling thread: waking a sleeping OpenMP thread
    // costs more than they take.
    const int threads = work < plugin_support::kMinParallelMultiplyAdds
                            ? 1
                            : static_cast<int>(std::clamp<int64_t>(host_.n_threads, 1, total));
    // A decoded row, then (two-level formats) its groups' scales: at most one per 8 values.
    const int64_t per_thread = widest + widest / 8 + 1;
    if (!scratch_.reserve(static_cast<size_t>(threads) * static_cast<size_t>(per_thread) *
                          sizeof(float)))
      return fail(GLMRT_ERR_OUT_OF_MEMORY, "kernels-scalar " + std::string(call) +
                                               ": the host refused " + std::to_string(threads) +
                                               " scratch rows of " + std::to_string(widest) +
                                               " floats");
    float* scratch = scratch_.as<float>();

#pragma omp parallel num_threads(threads)
    {
      float* decoded = scratch + static_cast<int64_t>(omp_get_thread_num()) * per_thread;
      size_t product = 0;
#pragma omp for schedule(static)
      for (int64_t item = 0; item < total; ++item) {
        while (item >= first_row[product + 1]) ++product;
        row_product(products[product], item - first_row[product], decoded);
      }
    }
    return GLMRT_OK;
  } catch (const std::exception& e) {
    return fail(GLMRT_ERR_INTERNAL, std::string("kernels-scalar ") + call + ": " + e.what());
  }
}

}  // namespace glmrt::kernels_scalar
