#include <glmrt/conformance/check_report.h>

#include <algorithm>

namespace glmrt::conformance {

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kSkip:
      return "SKIP";
  }
  return "?";
}

void CheckReport::pass(std::string name, std::string detail) {
  results_.push_back({std::move(name), Outcome::kPass, std::move(detail)});
}

void CheckReport::fail(std::string name, std::string detail) {
  results_.push_back({std::move(name), Outcome::kFail, std::move(detail)});
}

void CheckReport::skip(std::string name, std::string reason) {
  results_.push_back({std::move(name), Outcome::kSkip, std::move(reason)});
}

bool CheckReport::expect(bool ok, std::string name, std::string detail) {
  results_.push_back({std::move(name), ok ? Outcome::kPass : Outcome::kFail, std::move(detail)});
  return ok;
}

void CheckReport::append(const CheckReport& other) {
  results_.insert(results_.end(), other.results_.begin(), other.results_.end());
}

size_t CheckReport::count(Outcome outcome) const {
  return static_cast<size_t>(
      std::count_if(results_.begin(), results_.end(),
                    [&](const CheckResult& r) { return r.outcome == outcome; }));
}

}  // namespace glmrt::conformance
