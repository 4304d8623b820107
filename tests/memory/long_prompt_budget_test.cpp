// A 4000-token prompt prefilled whole (memory.prefill_chunk 0) under budgets
// at the edge of the memory plan: the process's peak RSS (VmHWM, as `glmrt
// run` reports it) stays under the budget, or the run is refused before
// anything is loaded. Before the plan counted every buffer that grows with
// the prompt, glm_tiny peaked at 94.6 MiB under a 38 MiB budget.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "glmrt_process.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::run_glmrt;

constexpr double kMiB = 1024.0 * 1024.0;

std::string prompt_ids(int n) {
  std::string ids;
  uint32_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    if (i) ids += ',';
    ids += std::to_string((x >> 8) % 1000);
  }
  return ids;
}

/// configs/reference.yaml's plugins and precision with the given memory and draft.
fs::path write_profile(const std::string& name, const std::string& budget, bool mtp) {
  const fs::path file = fs::temp_directory_path() / fmt::format("glmrt-long-prompt-{}.yaml", name);
  std::ofstream(file) << fmt::format(
      "plugins:\n  kernels: kernels-scalar\n  io: io-buffered\n  draft: {}\n{}threads: 2\n"
      "precision:\n  dense: f32\n  experts: f32\n  kv_cache: f32\n"
      "memory:\n  budget: {}\n  expert_cache: 16\n  pinned: 0\n  max_context: 4096\n  prefill_chunk: 0\n"
      "  history: off\ngeneration:\n  temperature: 0.0\n",
      mtp ? "draft-mtp" : "none", mtp ? "  max_draft_tokens: 2\n" : "", budget);
  return file;
}

double size_in_mib(const std::string& number, const std::string& unit) {
  const double v = std::stod(number);
  if (unit == "B") return v / kMiB;
  if (unit == "KiB") return v / 1024;
  if (unit == "MiB") return v;
  if (unit == "GiB") return v * 1024;
  throw std::runtime_error("unknown unit " + unit);
}

/// A figure of `glmrt profile check`'s memory plan ("minimum", "total"): the
/// line's first word, then the size and its unit.
double plan_figure(const fs::path& profile, const std::string& line) {
  const auto r = run_glmrt({"profile", "check", profile.string(), "--model", test::tiny_model()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::istringstream lines(r.out);
  for (std::string text; std::getline(lines, text);) {
    std::istringstream words(text);
    std::string first, number, unit;
    if (words >> first >> number >> unit && first == line) return size_in_mib(number, unit);
  }
  throw std::runtime_error("no " + line + " in\n" + r.out);
}

std::optional<double> peak_rss_mib(const std::string& report) {
  const std::string label = "peak RSS: ";
  const size_t at = report.find(label);
  if (at == std::string::npos) return std::nullopt;
  return std::stod(report.substr(at + label.size()));
}

struct LongRun {
  test::ProcessResult result;
  double budget_mib = 0;
};

LongRun run_under(const std::string& name, double budget_mib, bool mtp) {
  const fs::path profile = write_profile(name, fmt::format("{:.3f}MiB", budget_mib), mtp);
  LongRun run{run_glmrt({"run", "--profile", profile.string(), "--model", test::tiny_model(),
                         "--prompt-ids", prompt_ids(4000), "-n", "3", "--ignore-eos"}),
              budget_mib};
  fs::remove(profile);
  return run;
}

void expect_within_budget_or_refused(const LongRun& run) {
  if (run.result.exit_status != 0) {
    EXPECT_NE(run.result.err.find("Nothing was loaded"), std::string::npos) << run.result.err;
    return;
  }
  const auto peak = peak_rss_mib(run.result.err);
  ASSERT_TRUE(peak) << run.result.err;
  EXPECT_LT(*peak, run.budget_mib) << run.result.err;
}

TEST(LongPromptBudget, WholePromptStaysUnderABudgetJustAboveThePlansMinimum) {
  const fs::path probe = write_profile("probe", "64GiB", false);
  const double minimum = plan_figure(probe, "minimum");
  fs::remove(probe);
  const LongRun run = run_under("minimum", minimum + 1, false);
  expect_within_budget_or_refused(run);
  // Just above the minimum the whole prompt does not fit: it runs in chunks.
  EXPECT_EQ(run.result.exit_status, 0) << run.result.err;
}

TEST(LongPromptBudget, WholePromptRunsWholeWhenTheBudgetHoldsItsPlan) {
  for (const bool mtp : {false, true}) {
    // Unlimited: the plan of a whole-prompt call; that total as the budget.
    const fs::path probe = write_profile("whole", "0", mtp);
    const double whole = plan_figure(probe, "total");
    fs::remove(probe);
    const fs::path check = write_profile("check", fmt::format("{:.3f}MiB", whole + 1), mtp);
    const auto plan =
        run_glmrt({"profile", "check", check.string(), "--model", test::tiny_model()});
    fs::remove(check);
    EXPECT_EQ(plan.out.find("in chunks of"), std::string::npos) << plan.out;
    const LongRun run = run_under("whole", whole + 1, mtp);
    EXPECT_EQ(run.result.exit_status, 0) << run.result.err;
    expect_within_budget_or_refused(run);
  }
}

TEST(LongPromptBudget, BudgetBelowTheMinimumIsRefusedBeforeLoading) {
  const LongRun run = run_under("tiny", 8, false);
  EXPECT_NE(run.result.exit_status, 0);
  EXPECT_NE(run.result.err.find("Nothing was loaded"), std::string::npos) << run.result.err;
}

}  // namespace
}  // namespace glmrt
