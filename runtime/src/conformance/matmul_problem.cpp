#include "matmul_problem.h"

#include <ggml/ggml_blocks.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

namespace glmrt::conformance {
namespace {

int bits_of(uint32_t type) {
  switch (plugin::code_type(type)) {
    case GLMRT_I8:
      return 8;
    case GLMRT_I4:
      return 4;
    case GLMRT_I3:
      return 3;
    case GLMRT_I2:
      return 2;
    default:
      return 0;
  }
}

uint16_t to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);  // nearest even
}

float from_bf16(uint16_t value) {
  return std::bit_cast<float>(uint32_t{value} << 16);
}

/// Mostly N(0, 1), with one value in a hundred eight times larger, so int8
/// activation blocks see the outliers real hidden states have.
float gaussian_with_outliers(std::mt19937_64& random) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> percent(0, 99);
  const float value = normal(random);
  return percent(random) == 0 ? 8.0f * value : value;
}

int64_t stride_for(const MatmulCase& c) {
  const int64_t packed = plugin::packed_row_bytes(c.format.element_type, c.I);
  return c.padded_rows ? (packed + 63) / 64 * 64 : packed;
}

int64_t groups_for(const MatmulCase& c) {
  return c.format.group_size > 0 ? (c.I + c.format.group_size - 1) / c.format.group_size : 1;
}

}  // namespace

MatmulProblem::MatmulProblem(const MatmulCase& matmul_case)
    : spec_(matmul_case),
      row_stride_(stride_for(matmul_case)),
      data_bytes_(row_stride_ * matmul_case.O),
      data_(static_cast<size_t>(data_bytes_)),
      scales_(static_cast<size_t>(matmul_case.O * groups_for(matmul_case)) * sizeof(float)),
      x_(static_cast<size_t>(matmul_case.S * matmul_case.I) * sizeof(float)) {
  std::mt19937_64 random(spec_.seed);
  fill_weights(random());
  fill_activations(random());
}

int64_t MatmulProblem::groups_per_row() const {
  return groups_for(spec_);
}

glmrt_weight_view MatmulProblem::view() const {
  glmrt_weight_view view{};
  // Packed rows end right at the guard page, so the data is only byte aligned.
  view.format = spec_.format.to_format(spec_.padded_rows ? 64 : 1);
  view.data = data_.data();
  view.scales = plugin::is_quantized(spec_.format.element_type)
                    ? reinterpret_cast<const float*>(scales_.data())
                    : nullptr;
  view.rows = spec_.O;
  view.cols = spec_.I;
  view.row_stride_bytes = row_stride_;
  return view;
}

std::span<const float> MatmulProblem::x() const {
  return {reinterpret_cast<const float*>(x_.data()), static_cast<size_t>(spec_.S * spec_.I)};
}

void MatmulProblem::fill_weights(uint64_t seed) {
  std::mt19937_64 random(seed);
  // Bytes no value uses (row padding, the unused bits of a packed row's last
  // byte) hold noise: a plugin must not let them leak into the result.
  std::uniform_int_distribution<int> byte(0, 255);
  for (int64_t b = 0; b < data_bytes_; ++b) data_.data()[b] = static_cast<std::byte>(byte(random));
  const uint32_t format_type = spec_.format.element_type;
  if (plugin::is_ggml_blocks(format_type)) return fill_ggml_blocks(random);
  const uint32_t type = plugin::code_type(format_type);
  const bool two_level = plugin::is_two_level(format_type);
  auto* scales = reinterpret_cast<float*>(scales_.data());
  // Two-level block scales meet int8 sub-scale codes of up to 127.
  const float scale_unit = two_level ? 1.0f / 64 : 1.0f;
  std::uniform_real_distribution<float> scale(0.5f / 128 * scale_unit, 1.5f / 128 * scale_unit);
  for (int64_t k = 0; k < spec_.O * groups_per_row(); ++k) scales[k] = scale(random);
  // Sub-scale codes of either sign, never 0 (a zero group hides its codes).
  std::uniform_int_distribution<int> sub_scale(1, 127), sign(0, 1);
  const int bits = bits_of(type);
  std::uniform_int_distribution<int> code(bits ? -(1 << (bits - 1)) : 0,
                                          bits ? (1 << (bits - 1)) - 1 : 0);
  for (int64_t o = 0; o < spec_.O; ++o) {
    std::byte* row = data_.data() + o * row_stride_;
    for (int64_t i = 0; i < spec_.I; ++i) {
      switch (type) {
        case GLMRT_F32: {
          const float value = gaussian_with_outliers(random);
          std::memcpy(row + 4 * i, &value, 4);
          break;
        }
        case GLMRT_BF16: {
          const uint16_t value = to_bf16(gaussian_with_outliers(random));
          std::memcpy(row + 2 * i, &value, 2);
          break;
        }
        case GLMRT_I8:
          row[i] = static_cast<std::byte>(static_cast<int8_t>(code(random)));
          break;
        case GLMRT_I4: {
          const auto stored = static_cast<uint8_t>(code(random) + 8);
          const int shift = (i & 1) * 4;
          auto& target = reinterpret_cast<uint8_t&>(row[i >> 1]);
          target = static_cast<uint8_t>((target & ~(0x0F << shift)) | (stored << shift));
          break;
        }
        case GLMRT_I2: {
          const auto stored = static_cast<uint8_t>(code(random) + 2);
          const int shift = (i & 3) * 2;
          auto& target = reinterpret_cast<uint8_t&>(row[i >> 2]);
          target = static_cast<uint8_t>((target & ~(0x03 << shift)) | (stored << shift));
          break;
        }
        case GLMRT_I3:
          plugin::int3_store_code(reinterpret_cast<uint8_t*>(row), spec_.I, i,
                                  static_cast<unsigned>(code(random) + 4));
          break;
        default:
          break;
      }
    }
    if (two_level) {
      auto* sub = reinterpret_cast<int8_t*>(row + plugin::packed_row_bytes(type, spec_.I));
      const int64_t group = plugin::two_level_group(format_type);
      for (int64_t g = 0; g < (spec_.I + group - 1) / group; ++g)
        sub[g] = static_cast<int8_t>(sign(random) ? sub_scale(random) : -sub_scale(random));
    }
  }
}

void MatmulProblem::fill_activations(uint64_t seed) {
  std::mt19937_64 random(seed);
  auto* x = reinterpret_cast<float*>(x_.data());
  std::uniform_int_distribution<int> ternary(-1, 1);
  for (int64_t s = 0; s < spec_.S; ++s) {
    // A power of two per row: c * 127 / c and c / 127 * 127 round back to c.
    const float c = std::ldexp(1.0f, static_cast<int>(s % 3) - 1);
    for (int64_t i = 0; i < spec_.I; ++i) {
      float& value = x[s * spec_.I + i];
      value = spec_.activations == ActivationKind::kGaussian
                  ? gaussian_with_outliers(random)
                  : c * static_cast<float>(ternary(random));
    }
  }
}

float MatmulProblem::scale_of(int64_t o, int64_t i) const {
  const auto* scales = reinterpret_cast<const float*>(scales_.data());
  const int64_t group = spec_.format.group_size > 0 ? i / spec_.format.group_size : 0;
  const float scale = scales[o * groups_per_row() + group];
  const uint32_t type = spec_.format.element_type;
  if (!plugin::is_two_level(type)) return scale;
  const auto* row = reinterpret_cast<const int8_t*>(data_.data() + o * row_stride_);
  const int8_t* sub = row + plugin::packed_row_bytes(plugin::code_type(type), spec_.I);
  return scale * static_cast<float>(sub[i / plugin::two_level_group(type)]);
}

double MatmulProblem::weight(int64_t o, int64_t i) const {
  if (!ggml_values_.empty()) return ggml_values_[static_cast<size_t>(o * spec_.I + i)];
  const auto* row = reinterpret_cast<const uint8_t*>(data_.data() + o * row_stride_);
  switch (plugin::code_type(spec_.format.element_type)) {
    case GLMRT_F32: {
      float value;
      std::memcpy(&value, row + 4 * i, 4);
      return value;
    }
    case GLMRT_BF16: {
      uint16_t value;
      std::memcpy(&value, row + 2 * i, 2);
      return from_bf16(value);
    }
    case GLMRT_I8:
      return static_cast<double>(static_cast<int8_t>(row[i])) * scale_of(o, i);
    case GLMRT_I4:
      return double(((row[i >> 1] >> ((i & 1) * 4)) & 0x0F) - 8) * scale_of(o, i);
    case GLMRT_I2:
      return double(((row[i >> 2] >> ((i & 3) * 2)) & 0x03) - 2) * scale_of(o, i);
    case GLMRT_I3:
      return double(static_cast<int>(plugin::int3_stored_code(row, spec_.I, i)) - 4) *
             scale_of(o, i);
    default:
      return 0.0;
  }
}

double MatmulProblem::weight_range(int64_t o, int64_t i) const {
  // A block's terms (scale x code, minus a min) can each be a few times
  // its largest value, whichever value of the block i is.
  if (!ggml_block_max_.empty()) return 4.0 * ggml_block_max_[static_cast<size_t>(o * spec_.I + i)];
  const int bits = bits_of(spec_.format.element_type);
  if (bits == 0) return std::abs(weight(o, i));
  return std::ldexp(std::abs(double{scale_of(o, i)}), bits - 1);
}

ReferenceOutput compute_reference(const MatmulProblem& problem) {
  const MatmulCase& c = problem.spec();
  // ggml blocks too: a plugin may meet them with int8 activations.
  const bool quantized =
      plugin::is_quantized(c.format.element_type) || plugin::is_ggml_blocks(c.format.element_type);
  const bool quantizable = quantized && c.activations == ActivationKind::kGaussian;
  // Unit roundoff of f32, and the growth allowed for a sum of I products: a
  // summation error behaves like a random walk (about sqrt(I) roundings);
  // 2 sqrt(I) + 8 leaves a wide margin for any summation order on these
  // random-sign data while staying far below the error of one wrong term.
  const double unit_roundoff = std::ldexp(1.0, -24);
  const double growth = 2.0 * std::sqrt(static_cast<double>(c.I)) + 8.0;
  const std::span<const float> x = problem.x();
  ReferenceOutput out;
  const size_t n = static_cast<size_t>(c.S * c.O);
  out.y.resize(n);
  out.tolerance.resize(n);
  out.rounding.resize(n);
  out.quantization_sigma.resize(n);
  std::vector<double> w(static_cast<size_t>(c.I)), range(static_cast<size_t>(c.I));
  for (int64_t o = 0; o < c.O; ++o) {
    for (int64_t i = 0; i < c.I; ++i) {
      w[i] = problem.weight(o, i);
      range[i] = problem.weight_range(o, i);
    }
    for (int64_t s = 0; s < c.S; ++s) {
      const float* xs = x.data() + s * c.I;
      // Half a step of int8 quantization with one scale for the whole row,
      // the coarsest activation quantization the suite accepts.
      double half_step = 0.0;
      if (quantizable)
        for (int64_t i = 0; i < c.I; ++i) half_step = std::max(half_step, std::abs(double{xs[i]}));
      half_step /= 254.0;
      double sum = 0, magnitude = 0, abs_w = 0, squared_w = 0;
      for (int64_t i = 0; i < c.I; ++i) {
        sum += xs[i] * w[i];
        magnitude += (std::abs(double{xs[i]}) + half_step) * range[i];
        abs_w += std::abs(w[i]);
        squared_w += w[i] * w[i];
      }
      const size_t k = static_cast<size_t>(s * c.O + o);
      out.y[k] = sum;
      out.rounding[k] = growth * unit_roundoff * magnitude;
      // Each activation moves by at most half a step, so the dot moves by at
      // most half_step * sum|w| (1% slack for the f32 scale arithmetic); the
      // rounding errors are uniform in [-h, h], variance h^2 / 3.
      out.tolerance[k] = out.rounding[k] + 1.01 * half_step * abs_w;
      out.quantization_sigma[k] = half_step * std::sqrt(squared_w / 3.0);
    }
  }
  return out;
}

}  // namespace glmrt::conformance
