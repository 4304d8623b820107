// Every --json command prints one JSON document on stdout and nothing else;
// warnings and progress go to stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glmrt_process.h"
#include "temp_folder.h"

namespace glmrt::test {
namespace {

using ::testing::HasSubstr;

/// This process's files (ctest runs each test as its own process, in
/// parallel), removed when it ends.
const TempFolder& scratch() {
  static const TempFolder folder("glmrt-cli-json");
  return folder;
}

/// A profile with a plugin folder that does not exist (a warning) and a
/// model whose context is shorter than the profile's (another warning).
std::string warning_profile() {
  const auto file = scratch() / "warning.yaml";
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

TEST(JsonOutput, PluginsJsonListsTheGgmlTypesEachKernelsPluginRuns) {
  const ProcessResult r = run_glmrt({"plugins", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const nlohmann::json list = nlohmann::json::parse(r.out);
  int kernels_listed = 0;
  for (const auto& p : list) {
    SCOPED_TRACE(p.dump());
    if (p.at("kind") != "kernels" || !p.at("supported").get<bool>()) {
      EXPECT_FALSE(p.contains("ggml_types"));
      continue;
    }
    ++kernels_listed;
    // The in-tree kernels plugins run all 21 types of ABI 1.5.
    const auto types = p.at("ggml_types").get<std::vector<std::string>>();
    EXPECT_EQ(types.size(), 21u);
    for (const char* name : {"f16", "q8_0", "q4_k", "q2_k", "iq2_xxs", "iq4_xs", "iq1_m", "mxfp4"})
      EXPECT_NE(std::find(types.begin(), types.end(), name), types.end()) << name;
  }
  EXPECT_GE(kernels_listed, 1);
  const ProcessResult table = run_glmrt({"plugins"});
  EXPECT_THAT(table.out, HasSubstr("ggml types: f16 q8_0 q4_0"));
  // A running plugin's probe note, e.g. the int8 dot path kernels-avx2 takes here.
  EXPECT_THAT(table.out, HasSubstr("features: portable C++, runs on every CPU"));
}

TEST(JsonOutput, ValidateJsonIsOneObjectWhileWarningsGoToStderr) {
  std::ifstream in(tiny_model() + "/ref.json");
  nlohmann::json ref = nlohmann::json::parse(in);
  ref["cases"] = nlohmann::json::array({ref["cases"][0]});
  const std::string ref_file = (scratch() / "ref.json").string();
  std::ofstream(ref_file) << ref.dump();
  const ProcessResult r = run_glmrt({"validate", "--profile", warning_profile(), "--model",
                                     tiny_model(), "--ref", ref_file, "--json"});
  EXPECT_THAT(r.err, HasSubstr("max_context is 8192"));
  const nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report.contains("pass") && report.contains("thresholds") && report.contains("cases"));
  EXPECT_EQ(report["cases"].size(), 1u);
}

TEST(JsonOutput, ConvertFormatsListsEveryFormatWithItsBitsAndEachIsAcceptedEverywhere) {
  const ProcessResult r = run_glmrt({"convert", "--formats", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const nlohmann::json list = nlohmann::json::parse(r.out);  // throws on anything extra
  ASSERT_TRUE(list.is_array());
  std::map<std::string, double> bits;
  for (const auto& f : list) {
    ASSERT_EQ(f.size(), 2u) << f;
    bits[f.at("name").get<std::string>()] = f.at("bits_per_weight").get<double>();
  }
  // At GLM-5's expert shapes (rows of 6144 and 2048 inputs), scales included.
  EXPECT_DOUBLE_EQ(bits.at("int4-g64"), 4.5);
  EXPECT_DOUBLE_EQ(bits.at("int3-g64"), 3.5);
  EXPECT_DOUBLE_EQ(bits.at("int3-g128"), 3.25);
  EXPECT_DOUBLE_EQ(bits.at("int2-g32"), 3.0);
  EXPECT_DOUBLE_EQ(bits.at("int3"), 3.0 + 32.0 * (2.0 / 6144 + 1.0 / 2048) / 3.0);
  EXPECT_DOUBLE_EQ(bits.at("bf16"), 16.0);
  const std::string demo = std::string(GLMRT_SOURCE_DIR) + "/models/glm-demo";
  for (const auto& [name, value] : bits) {
    SCOPED_TRACE(name);
    const ProcessResult dry = run_glmrt({"convert", "--from", demo, "--dry-run", "--experts", name,
                                         "--dense", name, "--embed", name, "--lm-head", name});
    EXPECT_EQ(dry.exit_status, 0) << dry.err;
    const auto profile = scratch() / ("format-" + name + ".yaml");
    std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                              "precision: {dense: "
                           << name << ", experts: " << name << "}\n";
    const ProcessResult check = run_glmrt({"profile", "check", profile.string()});
    EXPECT_EQ(check.exit_status, 0) << check.err;
  }
}

}  // namespace
}  // namespace glmrt::test
