// The drafting reference profiles (configs/reference-ngram.yaml,
// configs/reference-mtp.yaml) on generated checkpoints of the layout: validate
// passes at f32 thresholds against the independent reference, its greedy
// continuations decoded through drafting and verification with drafts on
// every case; and a drafter the checkpoint cannot serve is refused at load.
#include <glmrt/base/error.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>

#include "checkpoint_generator.h"
#include "variant_harness.h"

namespace glmrt::test {
namespace {

std::unique_ptr<Engine> open_with_profile(const std::string& profile_name,
                                          const std::filesystem::path& model_dir) {
  Profile profile =
      load_profile(std::filesystem::path(GLMRT_SOURCE_DIR) / "configs" / profile_name);
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  return Engine::open(profile, model_dir);
}

struct DraftVariant {
  std::string name;
  std::function<void(nlohmann::json&)> edit_config;
  StoredDType dtype = StoredDType::f32;
  bool mtp_local_copies = true;
};

std::vector<DraftVariant> draft_variants() {
  return {
      {"base", [](nlohmann::json&) {}},
      {"grouped_shared_swapped_bf16_shared_mtp_head",
       [](nlohmann::json& c) {
         c["n_group"] = 4;
         c["topk_group"] = 2;
         c["norm_topk_prob"] = false;
         c.erase("indexer_types");
         c["index_topk_pattern"] = "FSSFS";
         c["indexer_rope_interleave"] = true;
         c["rope_interleave"] = false;
         c["torch_dtype"] = "bfloat16";
       },
       StoredDType::bf16, false},
  };
}

void PrintTo(const DraftVariant& v, std::ostream* os) {
  *os << v.name;
}

class DraftingProfiles : public ::testing::TestWithParam<DraftVariant> {};

TEST_P(DraftingProfiles, ValidatePassesWithDraftsOnEveryCase) {
  const DraftVariant& v = GetParam();
  ScratchDir dir("glmrt-draft-variant");
  nlohmann::json config = base_variant_config();
  v.edit_config(config);
  const ReferenceConfig reference = ReferenceConfig::from_json(config);
  const TensorList weights =
      make_checkpoint_tensors({config, /*seed=*/20260702, v.dtype, v.mtp_local_copies});
  write_checkpoint(dir.path(), config, weights, 2);
  std::vector<OracleCase> cases;
  for (uint64_t seed : {31, 32}) {
    const ClearSequence s = choose_clear_sequence(reference, weights, 12, 5, seed);
    cases.push_back(oracle_case(s, reference, "seed" + std::to_string(seed)));
  }
  for (const std::string profile : {"reference-ngram.yaml", "reference-mtp.yaml"}) {
    auto engine = open_with_profile(profile, dir.path());
    const ValidationReport report =
        validate(*engine, cases, engine->profile().validate, ValidateOptions{});
    EXPECT_TRUE(report.pass) << profile;
    for (const CaseReport& c : report.cases) {
      EXPECT_TRUE(c.pass) << profile << " " << c.name << ": top1 " << c.top1_agree
                          << " max|dlogit| " << c.max_abs_dlogit << " greedy " << c.greedy_identical
                          << "/" << c.greedy_total;
      EXPECT_EQ(c.greedy_identical, c.greedy_total) << profile << " " << c.name;
      EXPECT_GT(c.draft.proposed, 0) << profile << " " << c.name;
      EXPECT_FALSE(c.draft.drafter.empty());
      std::printf("[%s, %s] %s: greedy %lld/%lld, %lld drafts proposed, %lld accepted\n",
                  v.name.c_str(), profile.c_str(), c.name.c_str(),
                  static_cast<long long>(c.greedy_identical),
                  static_cast<long long>(c.greedy_total), static_cast<long long>(c.draft.proposed),
                  static_cast<long long>(c.draft.accepted));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Generated, DraftingProfiles, ::testing::ValuesIn(draft_variants()),
                         [](const auto& info) { return info.param.name; });

TEST(DraftRefusal, MtpDrafterWithoutAnMtpLayerIsRefusedAtLoad) {
  ScratchDir dir("glmrt-no-mtp");
  nlohmann::json config = base_variant_config();
  config["num_nextn_predict_layers"] = 0;
  write_checkpoint(dir.path(), config, make_checkpoint_tensors({config, /*seed=*/9}), 1);
  try {
    open_with_profile("reference-mtp.yaml", dir.path());
    ADD_FAILURE() << "draft-mtp was accepted for a checkpoint without an MTP layer";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* needle : {"reference-mtp.yaml:", "plugins.draft", "draft-mtp", "has none",
                               "num_nextn_predict_layers = 0"})
      EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
  // Prompt lookup needs nothing of the checkpoint; asking that engine for
  // draft-mtp is refused the same way.
  auto engine = open_with_profile("reference-ngram.yaml", dir.path());
  EXPECT_THROW(engine->draft_setup({"draft-mtp", {}, {}}, {3, 1, false}), Error);
}

}  // namespace
}  // namespace glmrt::test
