// What error-compensating rounding costs at GLM-5 shapes: the factor of one
// [cols, cols] second-moment matrix (once per shared input: a layer's routed
// experts' gate and up share one) and the column sweep of a matrix's rows,
// in seconds and as seconds per GB of BF16 weights, with the peak resident
// memory the two add (VmHWM growth).
//   build/bench/convert/gptq_bench [COLS=6144] [ROWS=128] [FORMAT=int4-k32] [SAMPLES=COLS/8]
#include <glmrt/base/weight_precision.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/gptq_quantizer.h>
#include <glmrt/weights/matrix.h>

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

// Peak resident set so far (VmHWM, kB).
long peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key)
    if (key == "VmHWM:" && status >> value) return value;
  return 0;
}

double seconds_from(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t cols = argc > 1 ? std::stoll(argv[1]) : 6144;
  const int64_t rows = argc > 2 ? std::stoll(argv[2]) : 128;
  const glmrt::WeightPrecision p =
      glmrt::require_precision(argc > 3 ? argv[3] : "int4-k32", "FORMAT");
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.f, 1.f);
  // H = X^T X of 2 cols random rows: built row by row into the upper
  // triangle (the bench times the factor, not this).
  // Rows of X: GLM-5 calibrations see many more tokens than inputs (full
  // rank); fewer make H low-rank, its damped inverse harder.
  const int64_t samples = argc > 4 ? std::stoll(argv[4]) : cols / 8;
  const long before = peak_rss_kb();
  std::vector<float> h(static_cast<size_t>(cols * cols), 0.f);
  {
    std::vector<float> x(static_cast<size_t>(cols));
    for (int64_t r = 0; r < samples; ++r) {
      for (auto& v : x) v = normal(rng);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < cols; ++i)
        for (int64_t j = i; j < cols; ++j) h[i * cols + j] += x[i] * x[j];
    }
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < i; ++j) h[i * cols + j] = h[j * cols + i];
  }
  const auto t0 = std::chrono::steady_clock::now();
  const glmrt::GptqFactor f =
      glmrt::gptq_factor(std::move(h), cols, glmrt::kGptqDefaultDamping, "bench");
  const double factor_s = seconds_from(t0);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  for (auto& v : w) v = 0.02f * normal(rng);
  glmrt::MatrixStorage dst;
  dst.type = glmrt::element_type_for(p);
  dst.rows = rows;
  dst.cols = cols;
  dst.row_bytes = glmrt::plugin::packed_row_bytes(dst.type, cols);
  dst.group_size = p.group;
  std::vector<std::byte> data(static_cast<size_t>(rows * dst.row_bytes));
  std::vector<float> scales(static_cast<size_t>(rows * dst.scales_per_row()));
  dst.data = data.data();
  dst.scales = scales.data();
  const auto t1 = std::chrono::steady_clock::now();
  glmrt::gptq_encode_rows(w, rows, f, dst, 0, glmrt::GptqScales::during);
  const double sweep_s = seconds_from(t1);
  const double gb = static_cast<double>(rows * cols) * 2 / 1e9;
  fmt::print(
      "cols {} rows {} {}: factor {:.2f} s; sweep {:.3f} s = {:.0f} s per GB of BF16 rows; peak "
      "RSS growth {:.0f} MB (one factor in f32: {:.0f} MB)\n",
      cols, rows, glmrt::precision_name(p), factor_s, sweep_s, sweep_s / gb,
      static_cast<double>(peak_rss_kb() - before) / 1024.0,
      static_cast<double>(cols * cols) * 4 / 1e6);
  return 0;
}
