// The test reference forward pass against transformers' float64 outputs for
// glm_tiny: if it matches here, it can judge the runtime on checkpoints no
// oracle exists for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint_generator.h"
#include "reference_config.h"
#include "reference_forward.h"

namespace glmrt::test {
namespace {

const std::filesystem::path kTiny = std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny";

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

class ReferenceAgainstOracle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    config_ = new ReferenceConfig(ReferenceConfig::from_json(read_json(kTiny / "config.json")));
    weights_ = new TensorList(read_checkpoint_tensors(kTiny));
    oracle_ = new nlohmann::json(read_json(kTiny / "ref.json"));
  }
  static void TearDownTestSuite() {
    delete config_;
    delete weights_;
    delete oracle_;
  }
  static ReferenceConfig* config_;
  static TensorList* weights_;
  static nlohmann::json* oracle_;
};
ReferenceConfig* ReferenceAgainstOracle::config_ = nullptr;
TensorList* ReferenceAgainstOracle::weights_ = nullptr;
nlohmann::json* ReferenceAgainstOracle::oracle_ = nullptr;

TEST_F(ReferenceAgainstOracle, LogitsMatchTransformersAtEveryPosition) {
  ASSERT_FALSE(oracle_->at("cases").empty());
  for (const auto& c : oracle_->at("cases")) {
    const std::vector<int32_t> ids = c.at("full_ids");
    const ReferenceResult r = reference_forward(*config_, *weights_, ids);
    const auto& expected = c.at("logits");
    ASSERT_EQ(r.logits.size(), expected.size()) << c.at("name");
    double worst = 0.0;
    for (size_t t = 0; t < expected.size(); ++t) {
      ASSERT_EQ(r.logits[t].size(), expected[t].size());
      for (size_t v = 0; v < expected[t].size(); ++v) {
        const double want = expected[t][v].get<double>();
        // ref.json keeps 6 significant digits.
        worst = std::max(worst, std::abs(r.logits[t][v] - want) / std::max(1.0, std::abs(want)));
      }
      EXPECT_EQ(r.argmax(t), c.at("tf_pred")[t].get<int>()) << c.at("name") << " row " << t;
    }
    std::printf("[reference] %-8s %zu rows max rel|dlogit| %.2e\n",
                c.at("name").get<std::string>().c_str(), expected.size(), worst);
    EXPECT_LE(worst, 1e-4) << c.at("name");
  }
}

TEST_F(ReferenceAgainstOracle, DiscreteDecisionsMatchTransformers) {
  for (const auto& c : oracle_->at("cases")) {
    const std::vector<int32_t> ids = c.at("full_ids");
    const ReferenceResult r = reference_forward(*config_, *weights_, ids, /*with_mtp=*/true);
    for (const auto& [layer, per_position] : c.at("experts").items()) {
      const int l = std::stoi(layer);  // the MTP layer is num_hidden_layers
      ASSERT_TRUE(r.experts.count(l)) << "layer " << l;
      EXPECT_EQ(r.experts.at(l), per_position.get<std::vector<std::vector<int>>>())
          << c.at("name") << " layer " << l;
    }
    for (const auto& [layer, rows] : c.at("indexer_topk").items()) {
      const int l = std::stoi(layer);
      const auto want = rows.get<std::vector<std::vector<int>>>();
      const auto got = r.indexer_selection.count(l) ? r.indexer_selection.at(l)
                                                    : std::vector<std::vector<int>>{};
      EXPECT_EQ(got, want) << c.at("name") << " layer " << l;
    }
  }
}

TEST_F(ReferenceAgainstOracle, MtpLogitsMatchTransformers) {
  for (const auto& c : oracle_->at("cases")) {
    const std::vector<int32_t> ids = c.at("full_ids");
    const ReferenceResult r = reference_forward(*config_, *weights_, ids, /*with_mtp=*/true);
    ASSERT_EQ(r.mtp_logits.size(), ids.size() - 1);
    const auto& first = c.at("mtp_logits_first8");
    double worst = 0.0;
    for (size_t t = 0; t < first.size(); ++t)
      for (size_t v = 0; v < first[t].size(); ++v) {
        const double want = first[t][v].get<double>();
        worst =
            std::max(worst, std::abs(r.mtp_logits[t][v] - want) / std::max(1.0, std::abs(want)));
      }
    EXPECT_LE(worst, 1e-4) << c.at("name");
    const std::vector<int> pred = c.at("mtp_pred");
    for (size_t t = 0; t < pred.size(); ++t) {
      const auto& row = r.mtp_logits[t];
      EXPECT_EQ(std::max_element(row.begin(), row.end()) - row.begin(), pred[t])
          << c.at("name") << " MTP row " << t;
    }
  }
}

}  // namespace
}  // namespace glmrt::test
