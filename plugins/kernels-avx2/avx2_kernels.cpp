// The Kernels object: checks each call's arguments, then routes it to the
// integer kernels (int8 activations) or the float kernels.
#include "avx2_kernels.h"

#include "activation_quantizer.h"
#include "float_matmul.h"
#include "ggml_matmul.h"
#include "ggml_packed_rows.h"
#include "int_formats.h"
#include "int_matmul.h"
#include "tile_jobs.h"

#include <host_buffer.h>
#include <scratch_plan.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace glmrt::kernels_avx2 {
namespace {

using plugin_support::HostBuffer;
using plugin_support::ScratchPlan;

// Scratch sizes follow the calls' row counts, which grow one at a time
// while a sequence decodes: rounded up, most calls reuse the buffer.
constexpr size_t kScratchGranule = 64 * 1024;
/// Fewer activations than this (all products of a call together) are
/// quantized on the calling thread.
constexpr int64_t kMinParallelQuantize = int64_t{1} << 18;

const char* element_type_name(uint32_t type) {
  const char* name = plugin::element_type_name(type);
  return name ? name : "unknown element type";
}

class Avx2Kernels final : public plugin::Kernels {
 public:
  Avx2Kernels(const glmrt_host_services& host, const Settings& settings, CpuPaths paths)
      : settings_(settings),
        vnni_(paths.vnni),
        wide_lanes_(paths.vnni && paths.wide_lanes),
        n_threads_(std::max(1, host.n_threads)),
        scratch_(host, kScratchGranule) {}

  bool supports(const glmrt_weight_format& format) const noexcept override {
    if (format.struct_size < sizeof(glmrt_weight_format)) return false;
    if (format.packing == kLanePacking) return packs(format);
    if (format.packing != 0) return false;
    switch (format.element_type) {
      case GLMRT_F32:
      case GLMRT_BF16:
        return format.group_size == 0;  // no scales, so no groups
      case GLMRT_I8:
      case GLMRT_I4:
      case GLMRT_I3:
      case GLMRT_I2:
        return true;
      case GLMRT_I4K:
      case GLMRT_I3K:
      case GLMRT_I2K:
        return format.group_size == plugin::kTwoLevelBlock;
      default:
        // ggml blocks carry their scales: no groups.
        return plugin::is_ggml_blocks(format.element_type) && format.group_size == 0;
    }
  }

  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override {
    return matmul_hinted(x, S, w, y, 0);
  }

  glmrt_status grouped_matmul(const glmrt_matmul_product* products, size_t n) noexcept override {
    if (n > 0 && !products) return fail(GLMRT_ERR_INVALID_ARGUMENT, "grouped_matmul: NULL list");
    return run(products, n, ggml_passes());
  }

  glmrt_status matmul_hinted(const float* x, int64_t S, const glmrt_weight_view& w, float* y,
                             uint32_t hints) noexcept override {
    glmrt_matmul_product product{};
    product.struct_size = sizeof(product);
    product.x = x;
    product.S = S;
    product.w = w;
    product.y = y;
    const bool one_pass = (hints & GLMRT_PRODUCT_LOGITS) && settings_.int8_logits;
    return run(&product, 1, one_pass ? 1 : ggml_passes());
  }

  const char* last_error() const noexcept override { return error_; }

  void destroy() noexcept override { delete this; }

  glmrt_row_packing row_packing(const glmrt_weight_format& format,
                                int64_t cols) const noexcept override {
    glmrt_row_packing none{sizeof(glmrt_row_packing), 0, 1};
    if (format.struct_size < sizeof(glmrt_weight_format) || format.packing != 0 ||
        format.group_size != 0)
      return none;
    glmrt_weight_format packed = format;
    packed.packing = kLanePacking;
    if (!packs(packed) || cols <= 0) return none;
    const int64_t block = plugin::ggml_block_values(format.element_type);
    if (cols % block != 0 || !packs_rows(plugin::ggml_type_of(format.element_type), cols / block))
      return none;
    return {sizeof(glmrt_row_packing), kLanePacking, static_cast<uint32_t>(kPackedGroupRows)};
  }

  glmrt_status pack_rows(const glmrt_weight_format& format, void* data, int64_t rows, int64_t cols,
                         int64_t row_stride_bytes) noexcept override {
    if (row_packing(format, cols).packing != kLanePacking)
      return fail(GLMRT_ERR_UNSUPPORTED, "pack_rows: %s rows of %lld inputs are not packed here",
                  element_type_name(format.element_type), static_cast<long long>(cols));
    const int64_t row_bytes = plugin::packed_row_bytes(format.element_type, cols);
    if (rows < 0 || (rows > 0 && !data) || row_stride_bytes < row_bytes)
      return fail(GLMRT_ERR_INVALID_ARGUMENT,
                  "pack_rows: %lld rows at %p, %lld bytes apart (rows of %lld bytes)",
                  static_cast<long long>(rows), data, static_cast<long long>(row_stride_bytes),
                  static_cast<long long>(row_bytes));
    pack_rows_in_place(plugin::ggml_type_of(format.element_type), static_cast<uint8_t*>(data), rows,
                       cols / plugin::ggml_block_values(format.element_type), row_bytes,
                       row_stride_bytes, n_threads_);
    return GLMRT_OK;
  }

 private:
  ~Avx2Kernels() = default;  // only destroy() ends the object

  /// True for a packed format (packing kLanePacking) this object multiplies:
  /// the lane kernels need AVX-VNNI and int8 activations.
  bool packs(const glmrt_weight_format& format) const noexcept {
    if (!vnni_ || !settings_.pack_allowed || settings_.activations == ActivationMode::kF32 ||
        format.group_size != 0 || !plugin::is_ggml_blocks(format.element_type))
      return false;
    const uint32_t type = plugin::ggml_type_of(format.element_type);
    // Offered where it measured faster at S = 1 (docs/kernels-benchmark.md,
    // "Packed rows"): q4_0 always; q4_k and q6_k with int8x2 activations
    // only (with int8 their row kernels, one float step per super-block,
    // are cheaper).
    if (type == GLMRT_GGML_Q4_K || type == GLMRT_GGML_Q6_K)
      return settings_.activations == ActivationMode::kInt8Residual;
    return packs_rows(type, 8);
  }

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
    const int64_t block = plugin::ggml_block_values(w.format.element_type);
    if (w.cols % block != 0)
      return fail(GLMRT_ERR_INVALID_ARGUMENT,
                  "%lld inputs are not a whole number of %s blocks of %lld values",
                  static_cast<long long>(w.cols), element_type_name(w.format.element_type),
                  static_cast<long long>(block));
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

  /// One product as its tiles will see it, with where its scratch goes.
  struct Prepared {
    bool integer = false;
    bool ggml = false;  // ggml blocks with an int8-activation kernel
    IntMatmul int_problem;
    GgmlMatmul ggml_problem;
    FloatMatmul float_problem;
    size_t shares = SIZE_MAX;  // an earlier product with the same activations
    size_t values_at = 0, scales_at = 0, sums_at = 0, groups_at = 0;
    int64_t n_blocks = 0;
  };

  int ggml_passes() const { return settings_.activations == ActivationMode::kInt8Residual ? 2 : 1; }

  bool int_path(const glmrt_weight_view& w) const {
    return plugin::is_quantized(w.format.element_type) &&
           settings_.activations != ActivationMode::kF32 &&
           kernel_group_size(w.format) % kBlockSize == 0;
  }

  template <class Format>
  void plan_int(const glmrt_matmul_product& product, Prepared& p, ScratchPlan& plan) {
    const int64_t group_size = kernel_group_size(product.w.format);
    const ActivationLayout layout = activation_layout<Format>(product.w.cols, group_size);
    p.int_problem.activations.layout = layout;
    p.n_blocks = layout.steps * Format::kBlocksPerStep;
    if (p.shares == SIZE_MAX) {
      p.values_at = plan.add(static_cast<size_t>(product.S * layout.row_bytes));
      p.scales_at =
          plan.add(static_cast<size_t>(product.S * layout.scales_per_row) * sizeof(float));
      p.sums_at = plan.add(static_cast<size_t>(product.S * layout.groups) * sizeof(float));
    }
    p.groups_at = plan.add(static_cast<size_t>(p.n_blocks) * sizeof(int32_t));
  }

  template <class Format>
  void quantize(const glmrt_matmul_product& product, const Prepared& p) {
    quantize_activations<Format>(product.x, product.S, row_stride(product.x_stride, product.w.cols),
                                 product.w.cols, kernel_group_size(product.w.format),
                                 p.int_problem.activations);
  }

  static int64_t row_stride(int64_t stride, int64_t width) { return stride ? stride : width; }

  /// True when b's activations are a's: same rows, same quantized layout.
  static bool same_activations(const glmrt_matmul_product& a, const glmrt_matmul_product& b) {
    return a.x == b.x && a.S == b.S &&
           row_stride(a.x_stride, a.w.cols) == row_stride(b.x_stride, b.w.cols) &&
           a.w.cols == b.w.cols && a.w.format.element_type == b.w.format.element_type &&
           kernel_group_size(a.w.format) == kernel_group_size(b.w.format);
  }

  /// True when b's ggml activations are a's: the same rows of the same width.
  static bool same_ggml_activations(const glmrt_matmul_product& a, const glmrt_matmul_product& b) {
    return a.x == b.x && a.S == b.S && a.w.cols == b.w.cols &&
           row_stride(a.x_stride, a.w.cols) == row_stride(b.x_stride, b.w.cols);
  }

  /// `passes`: int8 passes over ggml blocks (ggml_passes(), or 1 for hinted logits).
  glmrt_status run(const glmrt_matmul_product* products, size_t n, int passes) {
    try {
      prepared_.assign(n, Prepared{});
      ScratchPlan plan;
      int64_t dequant_cols = 0;
      for (size_t i = 0; i < n; ++i) {
        const glmrt_matmul_product& product = products[i];
        if (product.struct_size < sizeof(glmrt_matmul_product))
          return fail(GLMRT_ERR_INVALID_ARGUMENT, "product %zu has struct_size %u", i,
                      product.struct_size);
        if (const glmrt_status status = check_arguments(product.x, product.S, product.w, product.y);
            status != GLMRT_OK)
          return status;
        if (product.x_stride < 0 || product.y_stride < 0 ||
            (product.x_stride > 0 && product.x_stride < product.w.cols) ||
            (product.y_stride > 0 && product.y_stride < product.w.rows))
          return fail(
              GLMRT_ERR_INVALID_ARGUMENT,
              "row strides %lld/%lld are shorter than the rows (%lld/%lld)",
              static_cast<long long>(product.x_stride), static_cast<long long>(product.y_stride),
              static_cast<long long>(product.w.cols), static_cast<long long>(product.w.rows));
        Prepared& p = prepared_[i];
        const glmrt_weight_view& w = product.w;
        if (product.S == 0 || w.rows == 0 || w.cols == 0) continue;
        if (settings_.activations != ActivationMode::kF32 &&
            has_ggml_int_kernel(w.format.element_type)) {
          p.ggml = true;
          // Every ggml type takes the same int8 rows: products of the same x
          // (gate and up, q_a and kv_a) quantize it once.
          for (size_t j = 0; j < i && p.shares == SIZE_MAX; ++j)
            if (prepared_[j].ggml && prepared_[j].shares == SIZE_MAX &&
                same_ggml_activations(products[j], product))
              p.shares = j;
          if (p.shares != SIZE_MAX) continue;
          const GgmlActivationBytes bytes = ggml_activation_bytes(product.S * passes, w.cols);
          p.values_at = plan.add(bytes.values);
          p.scales_at = plan.add(bytes.scales);
          p.sums_at = plan.add(bytes.sums16);
          continue;
        }
        p.integer = int_path(w);
        if (!p.integer) {
          if (plugin::is_quantized(w.format.element_type) ||
              plugin::is_ggml_blocks(w.format.element_type))
            dequant_cols = std::max(dequant_cols, w.cols);
          continue;
        }
        for (size_t j = 0; j < i && p.shares == SIZE_MAX; ++j)
          if (prepared_[j].integer && prepared_[j].shares == SIZE_MAX &&
              same_activations(products[j], product))
            p.shares = j;
        switch (plugin::code_type(w.format.element_type)) {
          case GLMRT_I8:
            plan_int<Int8Format>(product, p, plan);
            break;
          case GLMRT_I4:
            plan_int<Int4Format>(product, p, plan);
            break;
          case GLMRT_I3:
            plan_int<Int3Format>(product, p, plan);
            break;
          default:
            plan_int<Int2Format>(product, p, plan);
            break;
        }
      }
      const size_t dequant_at = plan.add(
          static_cast<size_t>(dequant_scratch_floats(dequant_cols, n_threads_)) * sizeof(float));
      if (!scratch_.reserve(plan.total()))
        return fail(GLMRT_ERR_OUT_OF_MEMORY, "the host refused %zu bytes of scratch", plan.total());
      std::byte* scratch = scratch_.data();
      jobs_.clear();
      ggml_quantize_.clear();
      for (size_t i = 0; i < n; ++i) {
        const glmrt_matmul_product& product = products[i];
        const glmrt_weight_view& w = product.w;
        Prepared& p = prepared_[i];
        if (product.S == 0 || w.rows == 0) continue;
        const int64_t y_stride = row_stride(product.y_stride, w.rows);
        if (w.cols == 0) {  // an empty sum
          for (int64_t s = 0; s < product.S; ++s)
            std::fill(product.y + s * y_stride, product.y + s * y_stride + w.rows, 0.0f);
          continue;
        }
        if (p.ggml) {
          const Prepared& owner = p.shares == SIZE_MAX ? p : prepared_[p.shares];
          GgmlMatmul& g = p.ggml_problem;
          g = {&w,
               {reinterpret_cast<int8_t*>(scratch + owner.values_at),
                reinterpret_cast<float*>(scratch + owner.scales_at),
                reinterpret_cast<int16_t*>(scratch + owner.sums_at)},
               product.S,
               product.y,
               y_stride,
               passes,
               vnni_,
               wide_lanes_};
          if (p.shares == SIZE_MAX)
            ggml_quantize_.push_back({product.x, product.S, row_stride(product.x_stride, w.cols),
                                      w.cols, g.passes, g.activations});
          jobs_.push_back(ggml_tiles(g));
          continue;
        }
        if (!p.integer) {
          FloatMatmul& f = p.float_problem;
          f = {&w,
               product.x,
               product.S,
               row_stride(product.x_stride, w.cols),
               product.y,
               y_stride,
               reinterpret_cast<float*>(scratch + dequant_at),
               dequant_cols};
          jobs_.push_back(float_tiles(f));
          continue;
        }
        IntMatmul& q = p.int_problem;
        const Prepared& owner = p.shares == SIZE_MAX ? p : prepared_[p.shares];
        q.weights = &w;
        q.S = product.S;
        q.y = product.y;
        q.y_stride = y_stride;
        q.vnni = vnni_;
        q.activations.values = reinterpret_cast<int8_t*>(scratch + owner.values_at);
        q.activations.lane_scales = reinterpret_cast<float*>(scratch + owner.scales_at);
        q.activations.group_sums = reinterpret_cast<float*>(scratch + owner.sums_at);
        if (w.format.group_size > 0) {
          auto* block_group = reinterpret_cast<int32_t*>(scratch + p.groups_at);
          fill_block_groups(w.cols, kernel_group_size(w.format), p.n_blocks, block_group);
          q.block_group = block_group;
        }
      }
      quantize_all(products, n);
      quantize_ggml(ggml_quantize_, n_threads_);
      for (size_t i = 0; i < n; ++i) {
        const Prepared& p = prepared_[i];
        if (!p.integer) continue;
        switch (plugin::code_type(products[i].w.format.element_type)) {
          case GLMRT_I8:
            jobs_.push_back(int_tiles<Int8Format>(p.int_problem));
            break;
          case GLMRT_I4:
            jobs_.push_back(int_tiles<Int4Format>(p.int_problem));
            break;
          case GLMRT_I3:
            jobs_.push_back(int_tiles<Int3Format>(p.int_problem));
            break;
          default:
            jobs_.push_back(int_tiles<Int2Format>(p.int_problem));
            break;
        }
      }
      run_tile_jobs(jobs_, n_threads_);
      return GLMRT_OK;
    } catch (const std::bad_alloc&) {
      return fail(GLMRT_ERR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& e) {
      return fail(GLMRT_ERR_INTERNAL, e.what());
    } catch (...) {
      return fail(GLMRT_ERR_INTERNAL, "unknown error");
    }
  }

  /// Quantizes the activations of every integer product that owns its own;
  /// several at once side by side (each set is a product's whole x).
  void quantize_all(const glmrt_matmul_product* products, size_t n) {
    owners_.clear();
    for (size_t i = 0; i < n; ++i)
      if (prepared_[i].integer && prepared_[i].shares == SIZE_MAX) owners_.push_back(i);
    const int64_t count = static_cast<int64_t>(owners_.size());
    int64_t elements = 0;
    for (const size_t i : owners_) elements += products[i].S * products[i].w.cols;
    // A decode step's activations take microseconds to quantize: waking the
    // team for them would cost more, and on a loaded machine far more.
    const bool parallel = count > 1 && n_threads_ > 1 && elements >= kMinParallelQuantize;
#pragma omp parallel for schedule(dynamic) num_threads(n_threads_) if (parallel)
    for (int64_t k = 0; k < count; ++k) {
      const size_t i = owners_[static_cast<size_t>(k)];
      switch (plugin::code_type(products[i].w.format.element_type)) {
        case GLMRT_I8:
          quantize<Int8Format>(products[i], prepared_[i]);
          break;
        case GLMRT_I4:
          quantize<Int4Format>(products[i], prepared_[i]);
          break;
        case GLMRT_I3:
          quantize<Int3Format>(products[i], prepared_[i]);
          break;
        default:
          quantize<Int2Format>(products[i], prepared_[i]);
          break;
      }
    }
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
  bool vnni_;        // the int and ggml dots' AVX-VNNI builds (same bits, faster)
  bool wide_lanes_;  // the ggml lane kernels at 16 rows (AVX-512 VNNI; same bits)
  int n_threads_;
  HostBuffer scratch_;
  // Reused from call to call (one call at a time): a step's products
  // allocate nothing once these have grown.
  std::vector<Prepared> prepared_;
  std::vector<TileJob> jobs_;
  std::vector<size_t> owners_;
  std::vector<GgmlQuantizeJob> ggml_quantize_;
  char error_[256] = {};
};

}  // namespace

KernelsPtr make_avx2_kernels(const glmrt_host_services& host, const Settings& settings,
                             CpuPaths paths) {
  return KernelsPtr(new Avx2Kernels(host, settings, paths));
}

}  // namespace glmrt::kernels_avx2
