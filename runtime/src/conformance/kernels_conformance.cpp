#include <glmrt/conformance/kernels_conformance.h>

#include "matmul_problem.h"
#include "plugin_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace glmrt::conformance {
namespace {

/// Floats around y that a plugin must leave alone.
constexpr size_t kGuardFloats = 64;
constexpr float kSentinel = -1234.5f;

/// y with sentinel-filled guard zones on both sides.
class GuardedOutput {
 public:
  explicit GuardedOutput(size_t n) : buffer_(n + 2 * kGuardFloats, kSentinel), n_(n) {}
  float* data() { return buffer_.data() + kGuardFloats; }
  const float* data() const { return buffer_.data() + kGuardFloats; }
  /// Index (relative to y) of the first guard float that changed, if any.
  bool guards_intact(std::ptrdiff_t& first_bad) const {
    for (size_t k = 0; k < kGuardFloats; ++k) {
      if (buffer_[k] != kSentinel) {
        first_bad = static_cast<std::ptrdiff_t>(k) - static_cast<std::ptrdiff_t>(kGuardFloats);
        return false;
      }
      if (buffer_[kGuardFloats + n_ + k] != kSentinel) {
        first_bad = static_cast<std::ptrdiff_t>(n_ + k);
        return false;
      }
    }
    return true;
  }

 private:
  std::vector<float> buffer_;
  size_t n_;
};

CheckResult failed(const MatmulCase& c, std::string detail) {
  return {c.name(), Outcome::kFail, std::move(detail)};
}

}  // namespace

CheckResult check_matmul_case(plugin::Kernels& kernels, const MatmulCase& c, uint32_t hints) {
  const MatmulProblem problem(c);
  const glmrt_weight_view view = problem.view();
  if (!kernels.supports(view.format)) {
    if (c.format.required()) return failed(c, "supports() refuses a format the core stores");
    return {c.name(), Outcome::kSkip, "the plugin declines this format through supports()"};
  }
  GuardedOutput y(static_cast<size_t>(c.S * c.O));
  const glmrt_status status =
      hints ? kernels.matmul_hinted(problem.x().data(), c.S, view, y.data(), hints)
            : kernels.matmul(problem.x().data(), c.S, view, y.data());
  if (status != GLMRT_OK)
    return failed(c, fmt::format("{} returned status {}: {}", hints ? "matmul_hinted" : "matmul",
                                 status, kernels.last_error()));
  std::ptrdiff_t bad = 0;
  if (!y.guards_intact(bad))
    return failed(c, fmt::format("wrote outside y[0, S*O): at y[{}]", bad));

  const ReferenceOutput ref = compute_reference(problem);
  double worst_ratio = 0, squared_error = 0, squared_sigma = 0, squared_rounding = 0;
  size_t worst = 0;
  for (size_t k = 0; k < ref.y.size(); ++k) {
    const double got = y.data()[k];
    if (!std::isfinite(got))
      return failed(c, fmt::format("y[s={}, o={}] = {} is not finite (expected {:.6g})", k / c.O,
                                   k % c.O, got, ref.y[k]));
    const double error = std::abs(got - ref.y[k]);
    const double ratio = ref.tolerance[k] > 0
                             ? error / ref.tolerance[k]
                             : (error > 0 ? std::numeric_limits<double>::infinity() : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = k;
    }
    squared_error += error * error;
    squared_sigma += ref.quantization_sigma[k] * ref.quantization_sigma[k];
    squared_rounding += ref.rounding[k] * ref.rounding[k];
  }
  if (worst_ratio > 1.0)
    return failed(c, fmt::format("y[s={}, o={}] = {:.9g}, expected {:.9g}: error {:.3g} exceeds "
                                 "the tolerance {:.3g} ({:.3g}x)",
                                 worst / c.O, worst % c.O, y.data()[worst], ref.y[worst],
                                 std::abs(y.data()[worst] - ref.y[worst]), ref.tolerance[worst],
                                 worst_ratio));
  std::string detail = fmt::format("worst error {:.3g} of its tolerance", worst_ratio);
  // The per-output bound is a worst case; on many outputs the typical error
  // must also look like rounding noise: an RMS above twice what per-row int8
  // quantization gives means coarser activation quantization than allowed.
  const double count = static_cast<double>(ref.y.size());
  if (squared_sigma > 0 && count >= 64) {
    const double rms = std::sqrt(squared_error / count);
    const double allowed =
        2.0 * std::sqrt(squared_sigma / count) + std::sqrt(squared_rounding / count);
    if (rms > allowed)
      return failed(c, fmt::format("RMS error {:.3g} over {} outputs exceeds {:.3g} (twice the "
                                   "RMS of per-row int8 activation rounding)",
                                   rms, ref.y.size(), allowed));
    detail += fmt::format("; RMS error {:.3g} of the allowed", rms / allowed);
  }
  return {c.name(), Outcome::kPass, std::move(detail)};
}

CheckReport check_kernels_interface(plugin::Kernels& kernels) {
  CheckReport report;
  for (const WeightFormatSpec& format : conformance_formats()) {
    if (!format.required()) continue;
    report.expect(kernels.supports(format.to_format(64)), "supports " + format.name(),
                  "supports() must accept every format the core stores");
  }
  glmrt_weight_format unknown = WeightFormatSpec{GLMRT_I4, 0}.to_format(64);
  unknown.element_type = 99;
  report.expect(!kernels.supports(unknown), "refuses unknown element type",
                "supports() accepted element type 99");
  glmrt_weight_format repacked = WeightFormatSpec{GLMRT_I4, 0}.to_format(64);
  repacked.packing = 7;
  report.expect(!kernels.supports(repacked), "refuses unknown packing",
                "supports() accepted packing 7 of int4");

  // A small valid problem to corrupt one field at a time.
  const MatmulProblem problem({{GLMRT_I8, 0}, 2, 3, 40, ActivationKind::kGaussian, true, 7});
  std::vector<float> y(6, kSentinel);
  auto y_untouched = [&] {
    for (float v : y)
      if (v != kSentinel) return false;
    return true;
  };
  auto expect_refusal = [&](const std::string& name, glmrt_weight_view view) {
    const glmrt_status status = kernels.matmul(problem.x().data(), 2, view, y.data());
    const std::string message = kernels.last_error() ? kernels.last_error() : "";
    report.expect(status != GLMRT_OK && !message.empty() && y_untouched(), name,
                  fmt::format("status {}, last_error \"{}\", y {}", status, message,
                              y_untouched() ? "untouched" : "written"));
  };
  glmrt_weight_view view = problem.view();
  view.format.element_type = 99;
  expect_refusal("matmul refuses an unsupported format", view);
  view = problem.view();
  view.row_stride_bytes = 39;
  expect_refusal("matmul refuses a row stride shorter than a row", view);
  view = problem.view();
  view.scales = nullptr;
  expect_refusal("matmul refuses integer weights without scales", view);

  const glmrt_status empty = kernels.matmul(problem.x().data(), 0, problem.view(), y.data());
  report.expect(empty == GLMRT_OK && y_untouched(), "S = 0 is a no-op",
                fmt::format("status {} ({}), y {}", empty, kernels.last_error(),
                            y_untouched() ? "untouched" : "written"));
  return report;
}

CheckReport run_kernels_conformance(const std::filesystem::path& plugin_file,
                                    const KernelsConformanceOptions& options) {
  CheckReport report;
  const PluginHost host(std::vector<std::filesystem::path>{});
  MemoryBudget budget;
  const PluginChoice choice{plugin_file.string(), {}, {}};
  check_rejects_unknown_setting(report, plugin_file, [&](const PluginChoice& bogus) {
    HostServices services(budget, 1);
    host.create_kernels(bogus, services);
  });

  for (size_t t = 0; t < options.thread_counts.size(); ++t) {
    const int threads = options.thread_counts[t];
    HostServices services(budget, threads);
    PluginHandle<plugin::Kernels> kernels = host.create_kernels(choice, services);
    const std::string suffix = fmt::format(" [{} threads]", threads);
    if (t == 0) {
      const CheckReport interface = check_kernels_interface(*kernels);
      for (CheckResult result : interface.results()) {
        result.name += suffix;
        report.add(std::move(result));
      }
    }
    CheckResult grouped = check_grouped_matmul(*kernels, kernels.info().abi_minor);
    grouped.name += suffix;
    report.add(std::move(grouped));
    CheckResult side_by_side =
        check_grouped_matmul_side_by_side(*kernels, kernels.info().abi_minor);
    side_by_side.name += suffix;
    report.add(std::move(side_by_side));
    CheckResult packing = check_row_packing(*kernels, kernels.info().abi_minor);
    packing.name += suffix;
    report.add(std::move(packing));
    for (const WeightFormatSpec& format : conformance_formats()) {
      // The host never gives a plugin of an older minor ggml blocks.
      if (plugin::is_ggml_blocks(format.element_type) &&
          kernels.info().abi_minor < GLMRT_ABI_MINOR_GGML_TYPES) {
        report.add({format.name() + suffix, Outcome::kSkip,
                    fmt::format("ABI 1.{} predates ggml's weight types (1.{})",
                                kernels.info().abi_minor, GLMRT_ABI_MINOR_GGML_TYPES)});
        continue;
      }
      if (t == 0) {
        CheckResult invariance = check_batch_invariance(*kernels, format);
        invariance.name += suffix;
        report.add(std::move(invariance));
      }
      const std::vector<MatmulCase> cases = conformance_cases(format);
      for (const MatmulCase& c : cases) {
        // Other thread counts: one mid-list case per format shows the row
        // split among threads is right.
        if (t > 0 && &c != &cases[cases.size() / 2]) continue;
        CheckResult result = check_matmul_case(*kernels, c);
        result.name += suffix;
        report.add(std::move(result));
        // ABI 1.8: the logits product, on one mid-list case per format.
        if (t == 0 && &c == &cases[cases.size() / 2] &&
            kernels.info().abi_minor >= GLMRT_ABI_MINOR_PRODUCT_HINTS) {
          CheckResult hinted = check_matmul_case(*kernels, c, GLMRT_PRODUCT_LOGITS);
          hinted.name += " (logits hint)" + suffix;
          report.add(std::move(hinted));
        }
      }
    }
  }
  return report;
}

}  // namespace glmrt::conformance
