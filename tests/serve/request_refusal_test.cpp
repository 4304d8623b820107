// The real server refuses what it would otherwise accept silently or fail
// on inside: a negative seed, best_of on chat, a field it does not know, and
// a JSON response_format whose first token logit_bias bans (a 400 naming
// logit_bias, streamed or not, where it was a 500 from the sampler).
#include "server_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace glmrt {
namespace {

using ::testing::HasSubstr;

TEST(ServeRefusals, FieldsTheServerCannotHonourAreA400NamingThem) {
  const std::string model = std::string(GLMRT_FIXTURES) + "/glm_tiny";
  const std::string profile = std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml";
  test::ServerProcess server({"--profile", profile, "--model", model});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60);
  const std::string hi = R"("messages": [{"role": "user", "content": "hi"}], "max_tokens": 4)";
  // `{` is token 90 of glm_tiny's vocabulary, the only one a JSON object can start with.
  const std::string no_brace =
      R"("response_format": {"type": "json_object"}, "logit_bias": {"90": -100})";
  const struct {
    std::string path, body, param, words;
  } cases[] = {
      {"/v1/chat/completions", "{" + hi + R"(, "seed": -1})", "seed", "must be in [0, "},
      {"/v1/completions", R"({"prompt": "x", "seed": -1})", "seed", "must be in [0, "},
      {"/v1/chat/completions", "{" + hi + R"(, "best_of": 2})", "best_of", "must be 1"},
      {"/v1/chat/completions", "{" + hi + R"(, "reasoning_effort": {}})", "reasoning_effort",
       "must be a string"},
      {"/v1/chat/completions", "{" + hi + R"(, "tools": [{"type": "function", "function": {}}]})",
       "tools[0].function.name", "is required"},
      {"/v1/chat/completions", "{" + hi + R"(, "n_predict": 5})", "n_predict",
       "not a field of /v1/chat/completions"},
      {"/v1/chat/completions", "{" + hi + ", " + no_brace + "}", "logit_bias",
       "cannot be satisfied"},
      {"/v1/chat/completions", "{" + hi + ", " + no_brace + R"(, "stream": true})", "logit_bias",
       "cannot be satisfied"},
      {"/v1/completions", R"({"prompt": "x", )" + no_brace + "}", "logit_bias",
       "cannot be satisfied"},
  };
  for (const auto& c : cases) {
    const auto response = client.Post(c.path, c.body, "application/json");
    ASSERT_TRUE(response) << c.body;
    EXPECT_EQ(response->status, 400) << c.body << "\n" << response->body;
    const auto error = nlohmann::json::parse(response->body)["error"];
    EXPECT_EQ(error["param"], c.param) << response->body;
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr(c.words)) << c.body;
  }
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace glmrt
