#include "baselines.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace glmrt::bench {
namespace {

constexpr size_t kL1Bytes = 4096;

__attribute__((target("avx2"))) uint64_t stream_slice_avx2(const std::byte* data, size_t bytes) {
  // Four independent accumulators keep enough loads in flight.
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
  const auto* p = reinterpret_cast<const __m256i*>(data);
  const size_t vectors = bytes / 32;
  for (size_t v = 0; v + 4 <= vectors; v += 4)
    for (int k = 0; k < 4; ++k) acc[k] = _mm256_add_epi64(acc[k], _mm256_load_si256(p + v + k));
  const __m256i sum =
      _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3]));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

uint64_t stream_slice_portable(const std::byte* data, size_t bytes) {
  uint64_t sum = 0;
  for (size_t k = 0; k + 8 <= bytes; k += 8) {
    uint64_t word;
    std::memcpy(&word, data + k, 8);
    sum += word;
  }
  return sum;
}

/// The inner loop of an int8 GEMV kernel with nothing around it: maddubs,
/// madd, add, eight accumulators to cover the multiply latency.
__attribute__((target("avx2"))) int32_t dot_loop_avx2(const uint8_t* a, const int8_t* b,
                                                      int64_t repeats) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[8];
  for (auto& v : acc) v = _mm256_setzero_si256();
  for (int64_t r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < kL1Bytes; i += 8 * 32) {
      for (int k = 0; k < 8; ++k) {
        const __m256i av = _mm256_load_si256(reinterpret_cast<const __m256i*>(a + i + 32 * k));
        const __m256i bv = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + i + 32 * k));
        acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(_mm256_maddubs_epi16(av, bv), ones));
      }
    }
  }
  __m256i sum = acc[0];
  for (int k = 1; k < 8; ++k) sum = _mm256_add_epi32(sum, acc[k]);
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  int32_t total = 0;
  for (int32_t v : lanes) total += v;
  return total;
}

int32_t dot_loop_portable(const uint8_t* a, const int8_t* b, int64_t repeats) {
  int32_t total = 0;
  for (int64_t r = 0; r < repeats; ++r)
    for (size_t i = 0; i < kL1Bytes; ++i) total += a[i] * b[i];
  return total;
}

}  // namespace

uint64_t stream_read(const std::byte* data, size_t bytes, int threads) {
  const bool avx2 = __builtin_cpu_supports("avx2");
  const size_t slice = bytes / static_cast<size_t>(threads) / 4096 * 4096;
  uint64_t checksum = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : checksum) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::byte* begin = data + static_cast<size_t>(t) * slice;
    checksum += avx2 ? stream_slice_avx2(begin, slice) : stream_slice_portable(begin, slice);
  }
  return checksum;
}

int64_t int8_dot_in_l1(int threads, int64_t repeats) {
  const bool avx2 = __builtin_cpu_supports("avx2");
  int64_t checksum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : checksum)
  {
    alignas(64) uint8_t a[kL1Bytes];
    alignas(64) int8_t b[kL1Bytes];
    const int seed = omp_get_thread_num() + 1;
    for (size_t i = 0; i < kL1Bytes; ++i) {
      a[i] = static_cast<uint8_t>((i * 37 + seed) % 16);  // int4-like unsigned codes
      b[i] = static_cast<int8_t>((i * 101 + seed) % 255 - 127);
    }
    checksum += avx2 ? dot_loop_avx2(a, b, repeats) : dot_loop_portable(a, b, repeats);
  }
  // The checksum only keeps the loop alive; the work done is what counts.
  return checksum == 0x7FFFFFFFFFFFll ? 0 : threads * repeats * static_cast<int64_t>(kL1Bytes);
}

}  // namespace glmrt::bench
