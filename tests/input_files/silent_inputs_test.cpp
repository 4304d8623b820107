// Input that was accepted and then silently ignored or misread, refused now by
// the command a user runs, naming the file and key: special token ids outside
// the vocabulary (config.json, generation_config.json), a profile of two YAML
// documents, ids past the vocabulary in `tokenize --decode`; and `profile
// check` printing "ok" before failing on the budget.
#include "glmrt_process.h"
#include "temp_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::run_glmrt;
using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;

/// A copy of glm_tiny in `folder` with `file` (a JSON file of it) edited.
fs::path tiny_copy_with(const TempFolder& folder, const std::string& file,
                        const std::function<void(nlohmann::json&)>& edit) {
  const fs::path model = folder / "model";
  fs::copy(test::tiny_model(), model, fs::copy_options::recursive);
  fs::remove(model / "ref.json");  // not read by run; 1.5 MB
  nlohmann::json j = nlohmann::json::parse(std::ifstream(model / file));
  edit(j);
  std::ofstream(model / file) << j.dump(2);
  return model;
}

test::ProcessResult run_on(const fs::path& model) {
  return run_glmrt({"run", "--profile", test::reference_profile(), "--model", model.string(),
                    "--prompt-ids", "1,2", "-n", "1"});
}

TEST(SilentInputs, RunRefusesAConfigEosIdPastTheVocabulary) {
  TempFolder folder;
  const fs::path model =
      tiny_copy_with(folder, "config.json", [](nlohmann::json& c) { c["eos_token_id"] = 5000; });
  const auto r = run_on(model);
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr((model / "config.json").string()),
                           HasSubstr("'eos_token_id' holds 5000"), HasSubstr("vocab_size 1024")));
  EXPECT_EQ(r.out, "");
}

TEST(SilentInputs, RunRefusesGenerationConfigIdsOutsideTheVocabulary) {
  TempFolder folder;
  const fs::path model = tiny_copy_with(folder, "generation_config.json", [](nlohmann::json& g) {
    g["eos_token_id"] = {1010, -1};
  });
  const auto r = run_on(model);
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr((model / "generation_config.json").string()),
                           HasSubstr("`eos_token_id` holds -1"), HasSubstr("vocab_size 1024")));
  EXPECT_EQ(r.out, "");
}

TEST(SilentInputs, AProfileOfTwoYamlDocumentsIsRefusedNamingTheFile) {
  TempFolder folder;
  const fs::path profile = folder / "two.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "---\n"
                            "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "threads: 1\n";
  const auto r = run_glmrt({"run", "--profile", profile.string(), "--model", test::tiny_model(),
                            "--prompt-ids", "1,2", "-n", "1"});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr(profile.string() + ":3:"),
                           HasSubstr("a profile is one YAML document")));
}

TEST(SilentInputs, TokenizeDecodeRefusesIdsOutsideTheVocabulary) {
  const std::string tokenizer = test::tiny_model() + "/tokenizer.json";
  for (const char* ids : {"[1, 5000]", "[-1]"}) {
    const auto r =
        run_glmrt({"tokenize", "--tokenizer", tokenizer, "--decode"}, test::Stdout::captured, ids);
    EXPECT_EQ(r.exit_status, 1) << ids;
    EXPECT_THAT(r.err, AllOf(HasSubstr("tokenize --decode: element"), HasSubstr("vocabulary"),
                             HasSubstr(" tokens: ids 0 to ")))
        << ids;
    EXPECT_EQ(r.out, "") << ids;
  }
  const auto ok = run_glmrt({"tokenize", "--tokenizer", tokenizer, "--decode"},
                            test::Stdout::captured, "[1, 2]");
  EXPECT_EQ(ok.exit_status, 0) << ok.err;
}

// "FILE: ok" and the settings were printed before the budget error.
TEST(SilentInputs, ProfileCheckBelowTheMinimumBudgetPrintsNothingAsIfFine) {
  TempFolder folder;
  const fs::path profile = folder / "small.yaml";
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {budget: 1MiB}\n";
  const auto r = run_glmrt({"profile", "check", profile.string(), "--model", test::tiny_model()});
  EXPECT_EQ(r.exit_status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, AllOf(HasSubstr(profile.string()), HasSubstr("below the minimum")));
}

}  // namespace
}  // namespace glmrt
