#include "weight_fill.h"

#include "random_bits.h"

#include <glmrt/base/error.h>
#include <glmrt/plugin/weight_format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string_view>
#include <vector>

namespace glmrt {
namespace {

using Fill = TensorRecipe::Fill;

// Streams of a key: its values, its scales, its per-tensor draws.
constexpr uint64_t kValuesStream = 1, kScalesStream = 2, kTensorStream = 3;

uint64_t row_key(const TensorRecipe& r, uint64_t seed, uint64_t stream, int64_t row) {
  return mix(key_hash(r.key, seed) + stream * 0x632be59bd9b4e019ull) ^
         mix(static_cast<uint64_t>(row) + 1);
}

Random row_random(const TensorRecipe& r, uint64_t seed, uint64_t stream, int64_t row) {
  return Random(row_key(r, seed, stream, row));
}

// Random packed values with a symmetric, zero-mean distribution: the one code
// below -qmax (-128, -8 or -2) becomes 0, as symmetric quantization never
// produces it.
template <uint32_t Type>
inline uint64_t symmetric_word(uint64_t w) {
  switch (Type) {
    case GLMRT_I4: {  // a nibble 0000 (-8) gets bit 3: 1000 (0)
      uint64_t t = w | (w >> 1);
      t |= t >> 2;
      return w | ((~t & 0x1111111111111111ull) << 3);
    }
    case GLMRT_I2: {  // a field 00 (-2) gets bit 1: 10 (0)
      const uint64_t t = w | (w >> 1);
      return w | ((~t & 0x5555555555555555ull) << 1);
    }
    default: {  // int8: a byte 0x80 (-128) loses its top bit: 0x00
      constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kHigh = 0x8080808080808080ull;
      const uint64_t t = w ^ kHigh;                                // 0x80 bytes become 0x00
      const uint64_t zero = ~(((t & kLow7) + kLow7) | t) & kHigh;  // exactly those bytes
      return w ^ zero;
    }
  }
}

// Word i of a row is a function of (row key, i) alone: no chain from one word
// to the next, so the loop pipelines and vectorizes.
template <uint32_t Type>
void fill_words(uint64_t row_key, std::span<std::byte> row) {
  const size_t words = row.size() / 8;
  auto* out = reinterpret_cast<unsigned char*>(row.data());
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = symmetric_word<Type>(random_word(row_key, i));
    std::memcpy(out + 8 * i, &w, 8);
  }
  if (8 * words < row.size()) {
    const uint64_t w = symmetric_word<Type>(random_word(row_key, words));
    std::memcpy(out + 8 * words, &w, row.size() - 8 * words);
  }
}

// The sub-scale code every group of a two-level row gets: the row's scale is
// its F32 block scales times this.
constexpr int8_t kTwoLevelSubScale = 64;

// int3 blocks (weight_format.h): the low two bits of each value drawn as int2
// draws them ({1, 2, 2, 3}: the field 00 becomes 10), the high bit uniform:
// codes v + 4 in {1, 2, 2, 3, 5, 6, 6, 7}, values -3..3 with zero mean.
void fill_int3_row(uint64_t row_key, int64_t cols, std::span<std::byte> row) {
  fill_words<GLMRT_I8>(row_key, row);  // uniform bytes (int8's rule only changes 0x80)
  auto* bytes = reinterpret_cast<uint8_t*>(row.data());
  for (int64_t first = 0; first < cols; first += plugin::kInt3BlockValues) {
    const int64_t n = std::min<int64_t>(plugin::kInt3BlockValues, cols - first);
    uint8_t* low = bytes + first / plugin::kInt3BlockValues * plugin::kInt3BlockBytes;
    for (int64_t k = 0; k < plugin::int3_high_offset(n); ++k) {
      const unsigned b = low[k], t = b | (b >> 1);
      low[k] = static_cast<uint8_t>(b | ((~t & 0x55u) << 1));
    }
  }
}

void fill_packed_row(const TensorRecipe& r, uint64_t row_key, std::span<std::byte> row) {
  const uint32_t code_type = plugin::code_type(r.packed_type);
  if (plugin::is_two_level(r.packed_type)) {
    // The codes as their plain type draws them, then one sub-scale per group.
    const auto codes = static_cast<size_t>(plugin::packed_row_bytes(code_type, r.cols));
    TensorRecipe plain = r;
    plain.packed_type = code_type;
    fill_packed_row(plain, row_key, row.first(codes));
    for (std::byte& b : row.subspan(codes)) b = static_cast<std::byte>(kTwoLevelSubScale);
    return;
  }
  if (r.packed_type == GLMRT_I3) {
    fill_int3_row(row_key, r.cols, row);
    return;
  }
  switch (r.packed_type) {
    case GLMRT_I4:
      fill_words<GLMRT_I4>(row_key, row);
      break;
    case GLMRT_I2:
      fill_words<GLMRT_I2>(row_key, row);
      break;
    default:
      fill_words<GLMRT_I8>(row_key, row);
  }
  // Fields past the last column hold the zero code, as a quantizer writes them.
  const int per_byte = r.packed_type == GLMRT_I4 ? 2 : r.packed_type == GLMRT_I2 ? 4 : 1;
  const int used = static_cast<int>(r.cols % per_byte);
  if (used != 0) {
    const int bits = 8 / per_byte;
    const uint8_t zero_code = r.packed_type == GLMRT_I4 ? 8 : 2;
    auto last = std::to_integer<uint8_t>(row.back());
    for (int k = used; k < per_byte; ++k)
      last = static_cast<uint8_t>((last & ~(((1 << bits) - 1) << (k * bits))) |
                                  (zero_code << (k * bits)));
    row.back() = std::byte{last};
  }
}

void put_floats(std::span<const float> values, std::span<std::byte> out) {
  std::memcpy(out.data(), values.data(), values.size_bytes());
}

void fill_hot_bias(const TensorRecipe& r, uint64_t seed, std::span<std::byte> out) {
  const int64_t E = r.cols;
  Random random = row_random(r, seed, kTensorStream, 0);
  // A random order of the experts: rank 0 is the hottest.
  std::vector<uint64_t> draw(E);
  for (auto& d : draw) d = random.next();
  std::vector<int64_t> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return draw[a] < draw[b]; });
  std::vector<float> bias(E);
  for (int64_t rank = 0; rank < E; ++rank) {
    const double heat = std::pow(1.0 - double(rank) / double(E), 4.0);
    bias[order[rank]] = static_cast<float>(r.hot_skew * heat + 0.01 * random.uniform());
  }
  put_floats(bias, out);
}

}  // namespace

double packed_value_stddev(uint32_t type) {
  type = plugin::code_type(type);
  // int3: -3..3 with -2, 2 twice as likely and no 0 (fill_int3_row).
  if (type == GLMRT_I3) return std::sqrt(36.0 / 8.0);
  // Values -qmax..qmax equally likely, 0 twice as likely (it also stands for -qmax-1).
  const int qmax = type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
  double sum = 0;
  for (int k = 1; k <= qmax; ++k) sum += 2.0 * k * k;
  return std::sqrt(sum / (2.0 * qmax + 2.0));
}

void fill_tensor_rows(const PlannedTensor& t, uint64_t seed, int64_t first, int64_t count,
                      std::span<std::byte> out) {
  const TensorRecipe& r = t.recipe;
  const uint64_t row_bytes = t.bytes / static_cast<uint64_t>(t.generation_rows());
  if (out.size() != row_bytes * static_cast<uint64_t>(count))
    fail("fill_tensor_rows: {} bytes for {} rows of {} bytes ({})", out.size(), count, row_bytes,
         t.name);
  switch (r.fill) {
    case Fill::packed: {
      const uint64_t key = key_hash(r.key, seed);  // hashed once per call, not per row
      for (int64_t k = 0; k < count; ++k) {
        const int64_t source_row = ((first + k - r.row_shift) % r.rows + r.rows) % r.rows;
        const uint64_t row = mix(key + kValuesStream * 0x632be59bd9b4e019ull) ^
                             mix(static_cast<uint64_t>(source_row) + 1);
        fill_packed_row(r, row, out.subspan(k * row_bytes, row_bytes));
      }
      return;
    }
    case Fill::row_scales: {
      // A two-level row's F32 scales meet its sub-scale codes.
      const double unit = plugin::is_two_level(r.packed_type) ? kTwoLevelSubScale : 1.0;
      const double base = r.stddev / packed_value_stddev(r.packed_type) / unit;
      // Every group of a row at the row's scale.
      const int64_t per_row = r.group_size ? (r.cols + r.group_size - 1) / r.group_size : 1;
      std::vector<float> scales(static_cast<size_t>(r.rows * per_row));
      for (int64_t row = 0; row < r.rows; ++row) {
        const int64_t source_row = ((row - r.row_shift) % r.rows + r.rows) % r.rows;
        Random random = row_random(r, seed, kScalesStream, source_row);
        const auto scale = static_cast<float>(base * (0.8 + 0.4 * random.uniform()));
        std::fill_n(scales.begin() + row * per_row, per_row, scale);
      }
      put_floats(scales, out);
      return;
    }
    case Fill::normal: {
      std::vector<float> values(row_bytes / 4);
      for (int64_t k = 0; k < count; ++k) {
        Random random = row_random(r, seed, kValuesStream, first + k);
        for (float& v : values) v = static_cast<float>(r.mean + r.stddev * random.normal());
        put_floats(values, out.subspan(k * row_bytes, row_bytes));
      }
      return;
    }
    case Fill::hot_bias:
      fill_hot_bias(r, seed, out);
      return;
  }
}

}  // namespace glmrt
