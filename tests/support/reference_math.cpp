#include "reference_math.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace glmrt::test::reference {

Weights::Weights(const TensorList& tensors) {
  for (const HostTensor& t : tensors) by_name_[t.name] = &t;
}

const HostTensor& Weights::get(const std::string& name, const std::vector<int64_t>& shape) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) throw std::invalid_argument("reference: no tensor " + name);
  if (it->second->shape != shape)
    throw std::invalid_argument(fmt::format("reference: tensor {} has the wrong shape", name));
  return *it->second;
}

Vec matvec(const HostTensor& w, const Vec& x) {
  const int64_t rows = w.shape[0], cols = w.shape[1];
  if (static_cast<int64_t>(x.size()) != cols) throw std::logic_error("matvec: size mismatch");
  Vec y(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(w.values[r * cols + c]) * x[c];
    y[r] = sum;
  }
  return y;
}

Vec rms_norm(const Vec& x, const HostTensor& weight, double eps) {
  double mean_square = 0.0;
  for (double v : x) mean_square += v * v;
  mean_square /= static_cast<double>(x.size());
  const double inv = 1.0 / std::sqrt(mean_square + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * weight.values[i];
  return y;
}

Vec layer_norm(const Vec& x, const HostTensor& weight, const HostTensor& bias, double eps) {
  const double n = static_cast<double>(x.size());
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double variance = 0.0;
  for (double v : x) variance += (v - mean) * (v - mean);
  variance /= n;
  const double inv = 1.0 / std::sqrt(variance + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = (x[i] - mean) * inv * weight.values[i] + bias.values[i];
  return y;
}

void rope(double* x, int dim, int pos, bool interleaved, double theta) {
  for (int j = 0; j < dim / 2; ++j) {
    const double angle = pos * std::pow(theta, -2.0 * j / dim);
    const int a = interleaved ? 2 * j : j;
    const int b = interleaved ? 2 * j + 1 : j + dim / 2;
    const double x1 = x[a], x2 = x[b];
    x[a] = x1 * std::cos(angle) - x2 * std::sin(angle);
    x[b] = x2 * std::cos(angle) + x1 * std::sin(angle);
  }
}

double silu(double v) {
  return v / (1.0 + std::exp(-v));
}
double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

double dot(const double* a, const double* b, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

std::vector<int> descending_order(const Vec& values) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return values[a] > values[b]; });
  return order;
}

}  // namespace glmrt::test::reference
