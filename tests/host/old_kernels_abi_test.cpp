// A kernels plugin built against the ABI 1.2 SDK (no grouped_matmul in its
// table) still loads, and the model runs on it: the host never asks it for a
// grouped call, it runs the per-head and per-expert products one at a time,
// and the oracle still passes at f32 thresholds in both MLA forms.
#include <glmrt/validate/oracle.h>
#include <gtest/gtest.h>

#include "engine_fixture.h"

namespace glmrt {
namespace {

const std::filesystem::path kOldPlugin =
    std::filesystem::path(GLMRT_TEST_PLUGIN_DIR) / "abi-1-2" / "libglmrt-test-abi-1-2.so";

TEST(OldKernelsAbi, PluginOfAbi12LoadsAndTheOraclePasses) {
  Profile profile = test_support::reference_profile();
  profile.kernels = PluginChoice{kOldPlugin.string(), {}, {}};
  profile.history = false;
  const auto engine = test_support::open_tiny_engine(profile);
  EXPECT_EQ(engine->kernels_info().abi_major, 1);
  EXPECT_EQ(engine->kernels_info().abi_minor, 2);
  const auto cases = load_oracle(test_support::kTinyModel / "ref.json");
  for (const AttentionFormChoice form :
       {AttentionFormChoice::absorbed, AttentionFormChoice::reconstructed}) {
    const ValidationReport report = validate(*engine, cases, profile.validate, {0, form});
    EXPECT_TRUE(report.pass) << "form " << static_cast<int>(form);
    for (const CaseReport& c : report.cases) {
      EXPECT_TRUE(c.pass) << c.name << ": top-1 " << c.top1_agree << ", max |dlogit| "
                          << c.max_abs_dlogit << ", KL " << c.mean_kl;
      EXPECT_GT(c.rows_checked, 0) << c.name;
    }
  }
}

}  // namespace
}  // namespace glmrt
