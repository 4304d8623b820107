// `glmrt serve` with a drafting profile (plugins.draft): greedy answers are
// the oracle's greedy continuations whether the drafter runs (no logprobs) or
// stays idle (logprobs asked: every token's logits), and /metrics reports
// what was proposed and accepted.
#include "../generate/engine_fixture.h"
#include "server_process.h"

#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace glmrt {
namespace {

using test_support::kTinyModel;

nlohmann::json post_json(httplib::Client& client, const std::string& path,
                         const nlohmann::json& body) {
  const auto response = client.Post(path, body.dump(), "application/json");
  if (!response) throw std::runtime_error("no response from " + path);
  if (response->status != 200)
    throw std::runtime_error(path + ": HTTP " + std::to_string(response->status) + ": " +
                             response->body);
  return nlohmann::json::parse(response->body);
}

// The first sample of metric `name` in Prometheus text, or -1.
double draft_metric(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
}

void check_drafting_server(const std::string& profile_name) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  const std::string profile = std::string(GLMRT_SOURCE_DIR) + "/configs/" + profile_name;
  test::ServerProcess server({"--profile", profile, "--model", kTinyModel.string()});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(120);
  for (const OracleCase& c : cases) {
    const std::string expected =
        post_json(client, "/detokenize", {{"tokens", c.generated_ids}})["content"];
    nlohmann::json request = {{"prompt", c.prompt_ids},
                              {"max_tokens", c.generated_ids.size()},
                              {"temperature", 0},
                              {"ignore_eos", true},
                              // The oracle's ids as /detokenize spells them, special tokens too.
                              {"skip_special_tokens", false}};
    const auto drafted = post_json(client, "/v1/completions", request);
    EXPECT_EQ(drafted["choices"][0]["text"], expected) << profile_name << " " << c.name;
    request["logprobs"] = 0;
    const auto stepwise = post_json(client, "/v1/completions", request);
    EXPECT_EQ(stepwise["choices"][0]["text"], expected) << profile_name << " " << c.name;
    EXPECT_EQ(stepwise["choices"][0]["logprobs"]["tokens"].size(), c.generated_ids.size());
  }
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("glmrt_draft_info{drafter="), std::string::npos);
  EXPECT_GT(draft_metric(metrics->body, "glmrt_draft_proposed_total"), 0) << metrics->body;
  EXPECT_GE(draft_metric(metrics->body, "glmrt_draft_accepted_total"), 0);
  EXPECT_GE(draft_metric(metrics->body, "glmrt_draft_tokens_per_forward"), 1.0);
  EXPECT_NE(metrics->body.find("glmrt_draft_position_acceptance_rate{position=\"1\"}"),
            std::string::npos);
  EXPECT_EQ(server.stop(), 0);
}

TEST(ServeDrafting, MtpDraftsLeaveGreedyAnswersUnchangedAndAreReported) {
  check_drafting_server("reference-mtp.yaml");
}

TEST(ServeDrafting, NgramDraftsLeaveGreedyAnswersUnchangedAndAreReported) {
  check_drafting_server("reference-ngram.yaml");
}

TEST(ServeDrafting, WithoutADrafterNoDraftMetrics) {
  test::ServerProcess server({"--profile",
                              std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml", "--model",
                              kTinyModel.string()});
  httplib::Client client("127.0.0.1", server.port());
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("glmrt_draft_"), std::string::npos);
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace glmrt
