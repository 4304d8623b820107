// Grouped products (ABI 1.3): one call with many products — every format the
// plugin supports, several S, strided rows, products that share their x —
// must give each product exactly what matmul() gives it alone, write nothing
// outside each y row's O values, and fail a list with a bad product.
#include <glmrt/conformance/kernels_conformance.h>

#include "matmul_problem.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <memory>
#include <vector>

namespace glmrt::conformance {
namespace {

constexpr float kGap = -7.25f;  // what strided rows leave between them

struct GroupedCase {
  std::unique_ptr<MatmulProblem> problem;
  std::vector<float> x;  // rows x_stride apart
  std::vector<float> y;  // rows y_stride apart, gaps kGap
  int64_t x_stride = 0, y_stride = 0;
  std::vector<float> alone;  // matmul() of the packed rows
};

bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

}  // namespace

CheckResult check_grouped_matmul(plugin::Kernels& kernels, int abi_minor) {
  const std::string name = "grouped_matmul gives every product what matmul gives it alone";
  if (abi_minor < GLMRT_ABI_MINOR_GROUPED_MATMUL)
    return {name, Outcome::kSkip,
            fmt::format("ABI 1.{} has no grouped call: the host runs the products one at a time",
                        abi_minor)};
  std::vector<GroupedCase> cases;
  uint64_t seed = 0x6A0;
  const int64_t shapes[][3] = {{1, 37, 300}, {3, 13, 95}, {9, 131, 700}, {2, 64, 128}};
  for (const WeightFormatSpec& format : conformance_formats()) {
    if (plugin::is_ggml_blocks(format.element_type) && abi_minor < GLMRT_ABI_MINOR_GGML_TYPES)
      continue;  // never given to a plugin of an older minor
    if (!kernels.supports(format.to_format(1))) {
      if (format.required())
        return {name, Outcome::kFail, format.name() + ": supports() refuses a required format"};
      continue;
    }
    for (const auto& shape : shapes) {
      const MatmulCase c{
          format, shape[0], shape[1], format.fit_inputs(shape[2]), ActivationKind::kGaussian,
          false,  ++seed};
      GroupedCase g;
      g.problem = std::make_unique<MatmulProblem>(c);
      // Every other product reads and writes strided rows, as the per-head
      // products of attention do.
      const bool strided = seed % 2 == 0;
      g.x_stride = strided ? c.I + 5 : 0;
      g.y_stride = strided ? c.O + 3 : 0;
      const int64_t xs = strided ? g.x_stride : c.I, ys = strided ? g.y_stride : c.O;
      g.x.assign(static_cast<size_t>(c.S * xs), 0.0f);
      for (int64_t s = 0; s < c.S; ++s)
        std::memcpy(g.x.data() + s * xs, g.problem->x().data() + s * c.I,
                    static_cast<size_t>(c.I) * sizeof(float));
      g.y.assign(static_cast<size_t>(c.S * ys), kGap);
      g.alone.assign(static_cast<size_t>(c.S * c.O), 0.0f);
      if (kernels.matmul(g.problem->x().data(), c.S, g.problem->view(), g.alone.data()) != GLMRT_OK)
        return {name, Outcome::kFail,
                fmt::format("{}: matmul failed: {}", c.name(), kernels.last_error())};
      cases.push_back(std::move(g));
    }
  }
  std::vector<glmrt_matmul_product> products;
  for (GroupedCase& g : cases) {
    glmrt_matmul_product p{};
    p.struct_size = sizeof(p);
    p.x = g.x.data();
    p.S = g.problem->spec().S;
    p.x_stride = g.x_stride;
    p.w = g.problem->view();
    p.y = g.y.data();
    p.y_stride = g.y_stride;
    products.push_back(p);
  }
  // Two products that read the same x (gate and up of an expert).
  std::vector<float> twin(cases.front().y.size(), kGap);
  glmrt_matmul_product second = products.front();
  second.y = twin.data();
  products.push_back(second);

  if (kernels.grouped_matmul(products.data(), products.size()) != GLMRT_OK)
    return {name, Outcome::kFail,
            fmt::format("grouped call of {} products failed: {}", products.size(),
                        kernels.last_error())};
  for (size_t k = 0; k < cases.size() + 1; ++k) {
    const GroupedCase& g = cases[k < cases.size() ? k : 0];
    const std::vector<float>& y = k < cases.size() ? g.y : twin;
    const MatmulCase& c = g.problem->spec();
    const int64_t ys = g.y_stride ? g.y_stride : c.O;
    for (int64_t s = 0; s < c.S; ++s)
      for (int64_t o = 0; o < ys; ++o) {
        const float got = y[static_cast<size_t>(s * ys + o)];
        if (o >= c.O) {
          if (!same_bits(got, kGap))
            return {name, Outcome::kFail,
                    fmt::format("{}: y row {} was written past its {} outputs", c.name(), s, c.O)};
          continue;
        }
        const float want = g.alone[static_cast<size_t>(s * c.O + o)];
        if (!same_bits(got, want))
          return {name, Outcome::kFail,
                  fmt::format("{}{}: y[s={}, o={}] is {:.9g} in the grouped call but {:.9g} from "
                              "matmul alone",
                              c.name(), g.x_stride ? " strided" : "", s, o, got, want)};
      }
  }

  // A bad product fails the call with a message, and its y is not written.
  std::vector<float> scratch(cases.front().y.size(), kGap), untouched(scratch.size(), kGap);
  std::vector<glmrt_matmul_product> bad = {products.front(), products.front()};
  bad[0].y = scratch.data();
  bad[1].y = untouched.data();
  bad[1].w.format.element_type = 99;
  const glmrt_status status = kernels.grouped_matmul(bad.data(), bad.size());
  const std::string message = kernels.last_error() ? kernels.last_error() : "";
  bool written = false;
  for (float v : untouched) written |= !same_bits(v, kGap);
  if (status == GLMRT_OK || message.empty() || written)
    return {name, Outcome::kFail,
            fmt::format("a list with an unsupported product: status {}, last_error \"{}\", y {}",
                        status, message, written ? "written" : "untouched")};
  if (kernels.grouped_matmul(nullptr, 0) != GLMRT_OK)
    return {name, Outcome::kFail, "an empty list is not a no-op"};
  return {name, Outcome::kPass,
          fmt::format("{} products of {} formats, strided and shared rows, bit for bit",
                      products.size(), cases.size() / std::size(shapes))};
}

CheckResult check_grouped_matmul_side_by_side(plugin::Kernels& kernels, int abi_minor) {
  const std::string name =
      "grouped_matmul: S = 1 and S = 2 products side by side, again and again, bit for bit";
  if (abi_minor < GLMRT_ABI_MINOR_GROUPED_MATMUL)
    return {name, Outcome::kSkip,
            fmt::format("ABI 1.{} has no grouped call: the host runs the products one at a time",
                        abi_minor)};
  // A decode step's experts: many products of one format, some used by one
  // position and some by two, so a plugin's threads run tiles of both
  // shapes at once. Wide rows keep each tile busy long enough for a thread
  // to overwrite what another is still reading, if they share anything, and
  // make the call (~1.3M multiply-adds) one the plugins share out.
  constexpr int kProducts = 12, kRepeats = 6;
  constexpr int64_t kRows = 48, kInputs = 1536;
  uint64_t seed = 0x51DE;
  int formats = 0;
  for (const WeightFormatSpec& format : conformance_formats()) {
    if (plugin::is_ggml_blocks(format.element_type) && abi_minor < GLMRT_ABI_MINOR_GGML_TYPES)
      continue;
    if (!kernels.supports(format.to_format(1))) continue;
    ++formats;
    std::vector<std::unique_ptr<MatmulProblem>> problems;
    std::vector<std::vector<float>> alone, y;
    std::vector<glmrt_matmul_product> products;
    for (int k = 0; k < kProducts; ++k) {
      const MatmulCase c{
          format, 1 + k % 2, kRows, format.fit_inputs(kInputs), ActivationKind::kGaussian,
          false,  ++seed};
      problems.push_back(std::make_unique<MatmulProblem>(c));
      alone.emplace_back(static_cast<size_t>(c.S * c.O));
      if (kernels.matmul(problems.back()->x().data(), c.S, problems.back()->view(),
                         alone.back().data()) != GLMRT_OK)
        return {name, Outcome::kFail,
                fmt::format("{}: matmul failed: {}", c.name(), kernels.last_error())};
      y.emplace_back(alone.back().size());
    }
    for (int k = 0; k < kProducts; ++k) {
      glmrt_matmul_product p{};
      p.struct_size = sizeof(p);
      p.x = problems[k]->x().data();
      p.S = problems[k]->spec().S;
      p.w = problems[k]->view();
      p.y = y[k].data();
      products.push_back(p);
    }
    for (int repeat = 0; repeat < kRepeats; ++repeat) {
      if (kernels.grouped_matmul(products.data(), products.size()) != GLMRT_OK)
        return {name, Outcome::kFail,
                fmt::format("{}: grouped call failed: {}", format.name(), kernels.last_error())};
      for (int k = 0; k < kProducts; ++k)
        for (size_t i = 0; i < y[k].size(); ++i)
          if (!same_bits(y[k][i], alone[k][i]))
            return {name, Outcome::kFail,
                    fmt::format("{}: call {} of {}, product {} (S = {}): y[{}] is {:.9g}, matmul "
                                "alone gives {:.9g}",
                                format.name(), repeat + 1, kRepeats, k, products[k].S, i, y[k][i],
                                alone[k][i])};
    }
  }
  return {name, Outcome::kPass,
          fmt::format("{} formats, {} products of {} x {} per call, {} calls each", formats,
                      kProducts, kRows, kInputs, kRepeats)};
}

}  // namespace glmrt::conformance
