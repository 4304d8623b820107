// The outcome of a conformance run: one named check after another, each
// passed, failed (with what was wrong) or skipped (with why).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::conformance {

enum class Outcome { kPass, kFail, kSkip };

std::string_view outcome_name(Outcome outcome);  // "PASS", "FAIL", "SKIP"

struct CheckResult {
  std::string name;
  Outcome outcome = Outcome::kPass;
  /// Why it failed or was skipped; for a pass, what was measured.
  std::string detail;
};

class CheckReport {
 public:
  void add(CheckResult result) { results_.push_back(std::move(result)); }
  void pass(std::string name, std::string detail = {});
  void fail(std::string name, std::string detail);
  void skip(std::string name, std::string reason);
  /// Adds `ok ? pass : fail` and returns ok.
  bool expect(bool ok, std::string name, std::string detail);
  void append(const CheckReport& other);

  const std::vector<CheckResult>& results() const& { return results_; }
  /// By value on a temporary report, so `for (auto& r : run().results())` is safe.
  std::vector<CheckResult> results() && { return std::move(results_); }
  size_t count(Outcome outcome) const;

 private:
  std::vector<CheckResult> results_;
};

}  // namespace glmrt::conformance
