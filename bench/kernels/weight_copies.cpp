#include "weight_copies.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace glmrt::bench {

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
  AlignedBlock first_scales(std::max<uint64_t>(scale_bytes_, 4), 64);
  std::fill_n(first_scales.as<float>().data(), scale_bytes_ / 4, 0.01f);
  for (size_t c = 0; c < copies; ++c) {
    data_.emplace_back(data_bytes_, 64);
    std::memcpy(data_.back().data(), first.data(), data_bytes_);
    scales_.emplace_back(std::max<uint64_t>(scale_bytes_, 4), 64);
    std::memcpy(scales_.back().data(), first_scales.data(), scale_bytes_);
  }
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
