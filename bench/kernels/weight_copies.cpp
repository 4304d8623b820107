#include "weight_copies.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace glmrt::bench {
namespace {

/// Offsets of the f16 scales in a block of the ggml types the bench runs
/// (ggml-common.h): set to a normal value, so random bytes make no NaN or
/// subnormal scale that could change the speed.
std::vector<int> ggml_scale_offsets(uint32_t ggml_type) {
  switch (ggml_type) {
    case GLMRT_GGML_Q4_K:
      return {0, 2};
    case GLMRT_GGML_Q2_K:
      return {80, 82};
    case GLMRT_GGML_Q6_K:
      return {208};
    default:
      return {0};  // Q8_0, IQ2_XXS, IQ4_XS: d first
  }
}

void settle_ggml_scales(uint32_t element_type, int64_t rows, int64_t cols, int64_t row_stride,
                        uint8_t* data) {
  const uint32_t ggml_type = plugin::ggml_type_of(element_type);
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(ggml_type);
  constexpr uint16_t kScale = 0x2000;  // 2^-7
  for (int64_t o = 0; o < rows; ++o)
    for (int64_t b = 0; b < cols / traits.block_values; ++b)
      for (const int offset : ggml_scale_offsets(ggml_type))
        std::memcpy(data + o * row_stride + b * traits.block_bytes + offset, &kScale, 2);
}

}  // namespace

WeightCopies::WeightCopies(const glmrt_weight_format& format, int64_t rows, int64_t cols,
                           uint64_t min_total_bytes)
    : format_(format), rows_(rows), cols_(cols) {
  row_stride_ = (plugin::packed_row_bytes(format.element_type, cols) + 63) / 64 * 64;
  data_bytes_ = static_cast<uint64_t>(row_stride_ * rows);
  const int64_t groups =
      format.group_size > 0 ? (cols + format.group_size - 1) / format.group_size : 1;
  scale_bytes_ =
      plugin::is_quantized(format.element_type) ? static_cast<uint64_t>(rows * groups) * 4 : 0;
  const size_t copies =
      std::max<uint64_t>(1, (min_total_bytes + bytes_per_copy() - 1) / bytes_per_copy());

  // One random copy; the others are byte copies of it (contents do not matter
  // to the speed, only that every page is real and distinct).
  std::mt19937 random(7);
  AlignedBlock first(data_bytes_, 64);
  // Floats are uniform in [-1, 1] (never NaN or denormal, which could change
  // the speed); integer codes are uniform random bytes.
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (uint64_t k = 0; k + 4 <= data_bytes_; k += 4) {
    uint32_t word = random();
    if (format.element_type == GLMRT_F32) {
      const float v = value(random);
      std::memcpy(&word, &v, 4);
    } else if (format.element_type == GLMRT_BF16) {
      uint32_t low, high;
      const float a = value(random), b = value(random);
      std::memcpy(&low, &a, 4);
      std::memcpy(&high, &b, 4);
      word = (low >> 16) | (high & 0xFFFF0000u);
    }
    std::memcpy(first.data() + k, &word, 4);
  }
  if (plugin::is_ggml_blocks(format.element_type))
    settle_ggml_scales(format.element_type, rows, cols, row_stride_, first.as<uint8_t>().data());
  AlignedBlock first_scales(std::max<uint64_t>(scale_bytes_, 4), 64);
  std::fill_n(first_scales.as<float>().data(), scale_bytes_ / 4, 0.01f);
  for (size_t c = 0; c < copies; ++c) {
    data_.emplace_back(data_bytes_, 64);
    std::memcpy(data_.back().data(), first.data(), data_bytes_);
    scales_.emplace_back(std::max<uint64_t>(scale_bytes_, 4), 64);
    std::memcpy(scales_.back().data(), first_scales.data(), scale_bytes_);
  }
}

bool WeightCopies::pack_rows(plugin::Kernels& kernels) {
  const glmrt_row_packing offer = kernels.row_packing(format_, cols_);
  if (offer.packing == 0) return false;
  for (AlignedBlock& copy : data_)
    if (kernels.pack_rows(format_, copy.data(), rows_, cols_, row_stride_) != GLMRT_OK)
      throw std::runtime_error(kernels.last_error());
  format_.packing = offer.packing;
  return true;
}

glmrt_weight_view WeightCopies::view(size_t k) const {
  glmrt_weight_view view{};
  view.format = format_;
  view.data = data_[k].data();
  view.scales = scale_bytes_ > 0 ? scales_[k].as<float>().data() : nullptr;
  view.rows = rows_;
  view.cols = cols_;
  view.row_stride_bytes = row_stride_;
  return view;
}

}  // namespace glmrt::bench
