// Naive double-precision building blocks of the test reference forward pass.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "host_tensor.h"

namespace glmrt::test::reference {

using Vec = std::vector<double>;

/// Tensors by name; get() checks the shape and throws naming the tensor.
class Weights {
 public:
  explicit Weights(const TensorList& tensors);
  const HostTensor& get(const std::string& name, const std::vector<int64_t>& shape) const;
  bool has(const std::string& name) const { return by_name_.count(name) != 0; }

 private:
  std::unordered_map<std::string, const HostTensor*> by_name_;
};

/// y = W x for W [rows, cols].
Vec matvec(const HostTensor& w, const Vec& x);
Vec rms_norm(const Vec& x, const HostTensor& weight, double eps);
Vec layer_norm(const Vec& x, const HostTensor& weight, const HostTensor& bias, double eps);
/// Rotates x[0..dim) for position `pos`: pair j turns by pos * theta^(-2j/dim);
/// interleaved pairs are (2j, 2j+1), split-half pairs (j, j + dim/2).
void rope(double* x, int dim, int pos, bool interleaved, double theta);
double silu(double v);
double sigmoid(double v);
double dot(const double* a, const double* b, int n);
/// Indices of `values` from largest to smallest (ties: lower index first).
std::vector<int> descending_order(const Vec& values);

}  // namespace glmrt::test::reference
