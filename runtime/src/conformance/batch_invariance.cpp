// Batch invariance: a row's result must not depend on the other rows of the
// call. Speculative decoding verifies drafts as extra rows of one forward and
// keeps a position's token only if it equals what decoding that position alone
// gives; a kernel whose per-row summation order or activation quantization
// follows S (tile shapes, accumulator chains, blocking across rows) makes
// greedy output change with drafting even when no draft is accepted.
#include <glmrt/conformance/kernels_conformance.h>

#include "matmul_problem.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <vector>

namespace glmrt::conformance {
namespace {

/// Shapes with O off every tile height and I off every SIMD block; the larger
/// is above the plugins' threshold for splitting rows among threads (2^20
/// multiply-adds) from S = 8 on, so rows computed alone by one thread are
/// compared with the same rows split among threads.
struct InvarianceShape {
  int64_t O, I;
};
constexpr InvarianceShape kInvarianceShapes[] = {{13, 95}, {37, 300}, {131, 1100}};

}  // namespace

CheckResult check_batch_invariance(plugin::Kernels& kernels, const WeightFormatSpec& format) {
  const std::string name = fmt::format("{} rows do not depend on S", format.name());
  if (!kernels.supports(format.to_format(1))) {
    if (format.required()) return {name, Outcome::kFail, "supports() refuses a required format"};
    return {name, Outcome::kSkip, "the plugin declines this format through supports()"};
  }
  uint64_t seed = 0xB47C4 ^ (uint64_t{format.element_type} << 16) ^ format.group_size;
  for (const InvarianceShape& shape : kInvarianceShapes) {
    const MatmulCase c{format,
                       kMaxInvarianceRows,
                       shape.O,
                       format.fit_inputs(shape.I),
                       ActivationKind::kGaussian,
                       false,
                       ++seed};
    const MatmulProblem problem(c);
    const glmrt_weight_view view = problem.view();
    const float* x = problem.x().data();
    const int64_t O = c.O, I = c.I;
    // Each row alone.
    std::vector<float> alone(static_cast<size_t>(c.S * O));
    for (int64_t r = 0; r < c.S; ++r)
      if (kernels.matmul(x + r * I, 1, view, alone.data() + r * O) != GLMRT_OK)
        return {name, Outcome::kFail,
                fmt::format("{}: matmul failed: {}", c.name(), kernels.last_error())};
    std::vector<float> together(static_cast<size_t>(c.S * O));
    for (int64_t S = 2; S <= c.S; ++S) {
      if (kernels.matmul(x, S, view, together.data()) != GLMRT_OK)
        return {name, Outcome::kFail,
                fmt::format("{} S={}: matmul failed: {}", c.name(), S, kernels.last_error())};
      for (int64_t k = 0; k < S * O; ++k) {
        if (std::bit_cast<uint32_t>(together[k]) == std::bit_cast<uint32_t>(alone[k])) continue;
        return {name, Outcome::kFail,
                fmt::format("O={} I={}: y[s={}, o={}] is {:.9g} in a call of S={} rows but "
                            "{:.9g} computed alone (differs by {:.3g})",
                            O, I, k / O, k % O, together[k], S, alone[k], together[k] - alone[k])};
      }
    }
  }
  return {name, Outcome::kPass,
          fmt::format("S = 1..{}: every row bit for bit", kMaxInvarianceRows)};
}

}  // namespace glmrt::conformance
