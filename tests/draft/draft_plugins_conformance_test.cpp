// The draft conformance suite (`glmrt plugins test`) on both in-tree draft
// plugins, and the host's refusal of a draft plugin older than the draft
// contract.
#include <glmrt/conformance/plugin_conformance.h>

#include <gtest/gtest.h>

namespace glmrt::conformance {
namespace {

namespace fs = std::filesystem;

class DraftPluginConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(DraftPluginConformance, PassesEveryCheck) {
  const fs::path file = fs::path(GLMRT_BUILD_DIR) / "plugins" / ("libglmrt-" + GetParam() + ".so");
  const CheckReport report = run_plugin_conformance(file);
  for (const CheckResult& r : report.results())
    EXPECT_NE(r.outcome, Outcome::kFail) << r.name << ": " << r.detail;
  EXPECT_EQ(report.count(Outcome::kSkip), 0u);
  EXPECT_GE(report.count(Outcome::kPass), 10u);
}

INSTANTIATE_TEST_SUITE_P(InTree, DraftPluginConformance,
                         ::testing::Values("draft-ngram", "draft-mtp"), [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace glmrt::conformance
