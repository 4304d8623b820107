// Every --json command prints one JSON document on stdout and nothing else;
// warnings and progress go to stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "glmrt_process.h"

namespace glmrt::test {
namespace {

using ::testing::HasSubstr;

/// A profile with a plugin folder that does not exist (a warning) and a
/// model whose context is shorter than the profile's (another warning).
std::string warning_profile() {
  const auto file = std::filesystem::path(::testing::TempDir()) / "glmrt-cli-warning.yaml";
  std::ofstream(file) << "plugin_paths: [no-such-plugin-folder]\n"
                         "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                         "memory: {max_context: 8192}\n";
  return file.string();
}

TEST(JsonOutput, PluginsJsonIsOneArrayWhileWarningsGoToStderr) {
  const ProcessResult r = run_glmrt({"plugins", "--json", "--profile", warning_profile()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no-such-plugin-folder"));
  const nlohmann::json list = nlohmann::json::parse(r.out);  // throws on anything extra
  ASSERT_TRUE(list.is_array());
  EXPECT_FALSE(list.empty());
  for (const auto& p : list) EXPECT_TRUE(p.contains("name") && p.contains("abi")) << p;
}

TEST(JsonOutput, ValidateJsonIsOneObjectWhileWarningsGoToStderr) {
  std::ifstream in(tiny_model() + "/ref.json");
  nlohmann::json ref = nlohmann::json::parse(in);
  ref["cases"] = nlohmann::json::array({ref["cases"][0]});
  const std::string ref_file = ::testing::TempDir() + "/glmrt-cli-json-ref.json";
  std::ofstream(ref_file) << ref.dump();
  const ProcessResult r = run_glmrt({"validate", "--profile", warning_profile(), "--model",
                                     tiny_model(), "--ref", ref_file, "--json"});
  EXPECT_THAT(r.err, HasSubstr("max_context is 8192"));
  const nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report.contains("pass") && report.contains("thresholds") && report.contains("cases"));
  EXPECT_EQ(report["cases"].size(), 1u);
}

}  // namespace
}  // namespace glmrt::test
