// `validate` reports what it measured: reference files are checked before
// use, rows and decisions are counted as compared, non-finite logits fail,
// and `glmrt validate --json` prints one JSON object.
#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "shell_command.h"

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>

#include "checkpoint_generator.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
const fs::path kModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";

nlohmann::json tiny_reference() {
  std::ifstream in(kModel / "ref.json");
  return nlohmann::json::parse(in);
}

class ValidateTest : public ::testing::Test {
 protected:
  /// `ref` written to a file of the scratch folder.
  fs::path write(const nlohmann::json& ref, const std::string& name = "ref.json") {
    const fs::path file = dir_.path() / name;
    std::ofstream(file) << ref.dump();
    return file;
  }
  /// The error load_oracle throws for `ref` ("" when it loads).
  std::string load_error(const nlohmann::json& ref) {
    try {
      load_oracle(write(ref));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  static std::unique_ptr<Engine> open_engine(const fs::path& model = kModel) {
    Profile profile = load_profile(fs::path(GLMRT_SOURCE_DIR) / "configs" / "reference.yaml");
    profile.plugin_paths.insert(profile.plugin_paths.begin(),
                                fs::path(GLMRT_BUILD_DIR) / "plugins");
    return Engine::open(profile, model);
  }

  test::ScratchDir dir_{"glmrt-validate"};
};

TEST_F(ValidateTest, ReferenceFileIsCheckedBeforeUse) {
  const nlohmann::json good = tiny_reference();
  EXPECT_EQ(load_error(good), "");
  const auto edited = [&](auto edit) {
    nlohmann::json ref = good;
    edit(ref["cases"][1]);
    return load_error(ref);
  };
  nlohmann::json empty = good;
  empty["cases"] = nlohmann::json::array();
  EXPECT_NE(load_error(empty).find("`cases` array is empty"), std::string::npos);

  std::string e = edited([](auto& c) { c["prompt_ids"][0] = 999; });
  EXPECT_NE(e.find("(p8_n12): `prompt_ids` is not a prefix of `full_ids`"), std::string::npos) << e;
  e = edited([](auto& c) { c["generated_ids"][3] = 1; });
  EXPECT_NE(e.find("`generated_ids`[3] = 1 but `full_ids`[11]"), std::string::npos) << e;
  e = edited([](auto& c) {
    c["generated_ids"].push_back(5);
    c["generated_ids"].push_back(5);
  });
  EXPECT_NE(e.find("`full_ids` has 20 tokens"), std::string::npos) << e;
  e = edited([](auto& c) { c["margin"].erase(0); });
  EXPECT_NE(e.find("`margin` (19)"), std::string::npos) << e;
  e = edited([](auto& c) { c["logits"][4].erase(0); });
  EXPECT_NE(e.find("`logits`[4] has 1023 columns"), std::string::npos) << e;
  e = edited([](auto& c) { c["mtp_pred"].erase(0); });
  EXPECT_NE(e.find("`mtp_pred` (18)"), std::string::npos) << e;
  e = edited([](auto& c) { c.erase("mtp_margin"); });
  EXPECT_NE(e.find("no field `mtp_margin`"), std::string::npos) << e;
  e = edited([](auto& c) { c["experts"]["x"] = nlohmann::json::array(); });
  EXPECT_NE(e.find("`x` is not a layer index"), std::string::npos) << e;
  e = edited([](auto& c) { c["margin"][2] = -1.0; });
  EXPECT_NE(e.find("`margin`[2]"), std::string::npos) << e;

  // A reference with no logits at all, and a folder given as the file.
  e = edited([](auto& c) { c["logits"] = nlohmann::json::array(); });
  EXPECT_NE(e.find("need one row per"), std::string::npos) << e;
  try {
    load_oracle(dir_.path());
    ADD_FAILURE() << "a directory loaded as ref.json";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("is a directory"), std::string::npos);
  }
  // Nesting deep enough to overflow a recursive walk is refused before parsing.
  const fs::path deep = dir_.path() / "deep.json";
  std::ofstream(deep) << "{\"cases\": " << std::string(5000, '[') << std::string(5000, ']') << "}";
  try {
    load_oracle(deep);
    ADD_FAILURE() << "a 5000-deep ref.json loaded";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("levels deep"), std::string::npos) << err.what();
  }
}

TEST_F(ValidateTest, AnMtpModelNeedsTheMtpFields) {
  nlohmann::json ref = tiny_reference();
  for (auto& c : ref["cases"]) {
    c.erase("mtp_pred");
    c.erase("mtp_margin");
  }
  const auto cases = load_oracle(write(ref));
  auto engine = open_engine();
  try {
    validate(*engine, cases, {}, {});
    ADD_FAILURE() << "validated an MTP model without MTP references";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("case p5_n12: the model has an MTP layer but the "
                                         "reference has no `mtp_pred`"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(ValidateTest, DecisionsAreComparedAndTheFirstDivergenceNamed) {
  nlohmann::json ref = tiny_reference();
  // Case p8_n12: one DSA row of layer 2 and one routing row of layer 3 edited.
  auto& c = ref["cases"][1];
  const int64_t from = c["sparse_rows_from"];
  c["indexer_topk"]["2"][3] = {0, 1, 2, 3, 4, 5, 6, 7};
  c["experts"]["3"][5] = {0, 1, 2, 3};
  auto engine = open_engine();
  const auto report = validate(*engine, load_oracle(write(ref)), {}, {});
  const CaseReport& edited = report.cases[1];
  EXPECT_EQ(edited.indexer_rows_differ, 1);
  EXPECT_EQ(edited.routing_rows_differ, 1);
  EXPECT_EQ(edited.rows_need_dsa, 1);
  ASSERT_TRUE(edited.first_divergence.has_value());
  EXPECT_EQ(edited.first_divergence->kind, "experts");  // position 5 comes before from + 3
  EXPECT_EQ(edited.first_divergence->layer, 3);
  EXPECT_EQ(edited.first_divergence->position, 5);
  EXPECT_EQ(edited.first_divergence->reference, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_GT(from + 3, 5);
  // Every other case reproduces the reference's decisions, MTP layer included.
  for (size_t i = 0; i < report.cases.size(); ++i) {
    if (i == 1) continue;
    EXPECT_EQ(report.cases[i].rows_need_dsa, 0) << report.cases[i].name;
    EXPECT_FALSE(report.cases[i].first_divergence.has_value()) << report.cases[i].name;
    EXPECT_GT(report.cases[i].routing_rows_compared, 0) << report.cases[i].name;
  }
  EXPECT_EQ(report.cases[0].indexer_rows_compared, 9 * 4 + 8);  // 4 main layers + MTP
}

TEST_F(ValidateTest, NonFiniteLogitsFailTheCaseAndSaySo) {
  // Finite weights whose logits overflow: an lm_head of ±3e38.
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kModel / "config.json"));
  test::TensorList tensors = test::read_checkpoint_tensors(kModel);
  for (float& v : test::find_tensor(tensors, "lm_head.weight")->values) v = v > 0 ? 3e38f : -3e38f;
  const fs::path model = dir_.path() / "overflow";
  test::write_checkpoint(model, config, tensors, 1);
  nlohmann::json ref = tiny_reference();
  ref["cases"] = {ref["cases"][4]};
  auto engine = open_engine(model);
  const auto report = validate(*engine, load_oracle(write(ref)), {}, {});
  const CaseReport& r = report.cases.front();
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(report.pass);
  EXPECT_GT(r.non_finite_rows, 0);
  EXPECT_TRUE(std::isinf(r.max_abs_dlogit));
}

TEST_F(ValidateTest, CommandPrintsOneJsonObjectWithTheChunkingItUsed) {
  const auto [status, out] = test::run_shell(fmt::format(
      "{}/glmrt validate --profile {}/configs/reference.yaml --model {} --ref {} "
      "--json --prefill-chunk 7 2>/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, kModel.string(), (kModel / "ref.json").string()));
  EXPECT_EQ(status, 0);
  const nlohmann::json j = nlohmann::json::parse(out);  // throws unless stdout is one JSON value
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["pass"], true);
  for (const char* key : {"pass", "thresholds", "cases"}) EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["cases"].size(), 5u);
  for (const auto& c : j["cases"]) {
    for (const char* key :
         {"name", "rows_total", "rows_checked", "rows_need_dsa", "greedy_checked",
          "greedy_identical", "greedy_total", "top1_agree", "max_abs_dlogit", "mean_kl",
          "mtp_checked", "mtp_top1_agree", "pass", "prefill_chunk", "forward_calls"})
      EXPECT_TRUE(c.contains(key)) << key;
    EXPECT_EQ(c["prefill_chunk"], 7);
    const int64_t rows = c["rows_total"], generated = c["greedy_total"];
    const int64_t prompt = rows - generated;
    EXPECT_EQ(c["forward_calls"], (rows + 6) / 7 + (prompt + 6) / 7 + generated - 1);
    EXPECT_EQ(c["rows_checked"], rows);
    EXPECT_EQ(c["rows_need_dsa"], 0);
  }
}

// The acceptance command of the DeepSeek-V3 kind: no MTP fields, no indexer,
// every row and every routing decision checked.
TEST_F(ValidateTest, DeepseekTinyPassesWithEveryRowChecked) {
  const fs::path model = fs::path(GLMRT_FIXTURES) / "deepseek_tiny";
  const auto [status, out] = test::run_shell(fmt::format(
      "{}/glmrt validate --profile {}/configs/reference.yaml --model {} --ref {} --json "
      "2>/dev/null",
      GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, model.string(), (model / "ref.json").string()));
  EXPECT_EQ(status, 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["pass"], true);
  ASSERT_EQ(j["cases"].size(), 6u);
  for (const auto& c : j["cases"]) {
    EXPECT_EQ(c["rows_checked"], c["rows_total"]) << c["name"];
    EXPECT_EQ(c["rows_need_dsa"], 0) << c["name"];
    EXPECT_EQ(c["greedy_identical"], c["greedy_total"]) << c["name"];
    EXPECT_EQ(c["mtp_checked"], false) << c["name"];
    EXPECT_GT(c["routing_rows_compared"].get<int64_t>(), 0) << c["name"];
    EXPECT_EQ(c["routing_rows_differ"], 0) << c["name"];
    EXPECT_LE(c["max_abs_dlogit"].get<double>(), 1e-3) << c["name"];
  }
}

TEST_F(ValidateTest, DraftingProfilesPassAtF32ThresholdsWithDraftsOnEveryCase) {
  // Greedy continuations go through drafting and verification; nothing else
  // about the report may change.
  for (const std::string drafter : {"ngram", "mtp"}) {
    const auto [status, out] = test::run_shell(fmt::format(
        "{}/glmrt validate --profile {}/configs/reference-{}.yaml --model {} --ref {} --json "
        "2>/dev/null",
        GLMRT_BUILD_DIR, GLMRT_SOURCE_DIR, drafter, kModel.string(),
        (kModel / "ref.json").string()));
    EXPECT_EQ(status, 0) << drafter;
    const nlohmann::json j = nlohmann::json::parse(out);
    EXPECT_EQ(j["pass"], true) << drafter;
    ASSERT_EQ(j["cases"].size(), 5u);
    for (const auto& c : j["cases"]) {
      const nlohmann::json& d = c["draft"];
      EXPECT_EQ(d["drafter"], "draft-" + drafter);
      EXPECT_GT(d["proposed"].get<int64_t>(), 0) << c["name"];
      EXPECT_LE(d["accepted"].get<int64_t>(), d["proposed"].get<int64_t>());
      EXPECT_LE(d["forwards"].get<int64_t>(), c["greedy_total"].get<int64_t>() - 1);
      EXPECT_EQ(c["greedy_identical"], c["greedy_total"]) << c["name"];
      EXPECT_EQ(c["mtp_top1_agree"], 1.0);
    }
  }
}

TEST_F(ValidateTest, WithoutADrafterEveryDecodeStepIsOneForward) {
  auto engine = open_engine();
  const auto report = validate(*engine, load_oracle(kModel / "ref.json"), {}, {});
  for (const CaseReport& c : report.cases) {
    EXPECT_EQ(c.draft.drafter, "");
    EXPECT_EQ(c.draft.proposed, 0);
    EXPECT_EQ(c.draft.forwards, c.greedy_total - 1) << c.name;
  }
}

}  // namespace
}  // namespace glmrt
