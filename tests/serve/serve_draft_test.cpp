// `glmrt serve` with a drafting profile (plugins.draft): greedy answers are
// the oracle's greedy continuations whether the drafter runs (no logprobs) or
// stays idle (logprobs asked: every token's logits), and /metrics reports
// what was proposed and accepted; a JSON answer (response_format) is the
// same with drafts verified under the mask as step by step.
#include "../generate/engine_fixture.h"
#include "server_process.h"

#include <glmrt/validate/oracle.h>

#include <gtest/gtest.h>

#include <httplib.h>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include <filesystem>
#include <string>
#include <vector>

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

void check_drafting_server(const std::string& profile_name, const std::string& parallel) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  const std::string profile = std::string(GLMRT_SOURCE_DIR) + "/configs/" + profile_name;
  test::ServerProcess server(
      {"--profile", profile, "--model", kTinyModel.string(), "--parallel", parallel});
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
  // A JSON answer (response_format): drafts are verified under the mask, so
  // the greedy answer is the one of a step-wise run.
  const nlohmann::json schema = nlohmann::json::parse(R"({"type": "object", "properties": {
      "name": {"type": "string", "maxLength": 12}, "n": {"type": "integer", "maximum": 500},
      "tags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
      "required": ["name", "n", "tags"]})");
  nlohmann::json json_request = {
      {"prompt", "A record:"},
      {"max_tokens", 200},
      {"temperature", 0},
      {"response_format",
       {{"type", "json_schema"}, {"json_schema", {{"name", "record"}, {"schema", schema}}}}}};
  const auto proposed = [&] {
    const auto m = client.Get("/metrics");
    return m ? draft_metric(m->body, "glmrt_draft_proposed_total") : -1.0;
  };
  const double proposed_before = proposed();
  const auto json_drafted = post_json(client, "/v1/completions", json_request);
  // The worker counts a request's drafts once it is done, which may be just
  // after its response went out: wait for the count rather than race it.
  double proposed_after = proposed();
  for (int tries = 0; tries < 100 && proposed_after <= proposed_before; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    proposed_after = proposed();
  }
  EXPECT_GT(proposed_after, proposed_before) << "no drafts were proposed for the JSON answer";
  json_request["logprobs"] = 0;
  const auto json_stepwise = post_json(client, "/v1/completions", json_request);
  EXPECT_EQ(json_drafted["choices"][0]["text"], json_stepwise["choices"][0]["text"]);
  EXPECT_EQ(json_drafted["choices"][0]["finish_reason"], "stop") << json_drafted.dump();
  const auto record = nlohmann::json::parse(json_drafted["choices"][0]["text"].get<std::string>());
  EXPECT_TRUE(record["n"].is_number_integer() && record["n"].get<int64_t>() <= 500) << record;
  EXPECT_LE(record["name"].get<std::string>().size(), 12u) << record;
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

// --parallel 1: a request decodes alone, its drafter's own cost model
// deciding; more: in the batch, as its plan decides.
TEST(ServeDrafting, MtpDraftsLeaveGreedyAnswersUnchangedAndAreReported) {
  check_drafting_server("reference-mtp.yaml", "1");
  check_drafting_server("reference-mtp.yaml", "2");
}

TEST(ServeDrafting, NgramDraftsLeaveGreedyAnswersUnchangedAndAreReported) {
  check_drafting_server("reference-ngram.yaml", "2");
}

// Requests given at once draft in one batch: each greedy answer is the
// oracle's.
TEST(ServeDrafting, DraftingRequestsTogetherGiveTheOraclesGreedyAnswers) {
  const auto cases = load_oracle(kTinyModel / "ref.json");
  test::ServerProcess server({"--profile",
                              std::string(GLMRT_SOURCE_DIR) + "/configs/reference-mtp.yaml",
                              "--model", kTinyModel.string(), "--parallel", "3"});
  std::vector<std::string> expected, got(cases.size());
  {
    httplib::Client client("127.0.0.1", server.port());
    for (const OracleCase& c : cases)
      expected.push_back(
          post_json(client, "/detokenize", {{"tokens", c.generated_ids}})["content"]);
  }
  std::vector<std::thread> requests;
  for (size_t i = 0; i < cases.size(); ++i)
    requests.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", server.port());
      client.set_read_timeout(120);
      try {
        got[i] = post_json(client, "/v1/completions",
                           {{"prompt", cases[i].prompt_ids},
                            {"max_tokens", cases[i].generated_ids.size()},
                            {"temperature", 0},
                            {"ignore_eos", true},
                            {"skip_special_tokens", false}})["choices"][0]["text"];
      } catch (const std::exception& e) {
        got[i] = e.what();
      }
    });
  for (std::thread& t : requests) t.join();
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], expected[i]) << cases[i].name;
  httplib::Client client("127.0.0.1", server.port());
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_GT(draft_metric(metrics->body, "glmrt_draft_proposed_total"), 0) << metrics->body;
  EXPECT_EQ(server.stop(), 0);
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
